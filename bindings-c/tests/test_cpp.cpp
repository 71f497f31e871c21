// The header compiles as C++17 and its functions link and run from C++:
// a server with a tool, a resource and a prompt, a JSON lookup, statuses.
// (The C tests cover behaviour; this checks the header's C++ face.)
#include <cstdio>
#include <cstring>
#include <string>

#include "ferromcp.h"

namespace {

int failures = 0;

void check(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "test_cpp: CHECK failed: %s\n", what);
        ++failures;
    }
}

// Callbacks are plain functions with C linkage-compatible signatures.
extern "C" void tool(void *, const char *, size_t, ferromcp_call *call) {
    ferromcp_call_respond(call, "\"hi\"");
}

extern "C" void resource(void *, const char *, const char *, ferromcp_call *call) {
    ferromcp_call_respond(call, "\"text\"");
}

extern "C" void prompt(void *, const char *, ferromcp_call *call) {
    ferromcp_call_respond(call, "\"prompt\"");
}

}  // namespace

int main() {
    ferromcp_server *server = nullptr;
    check(ferromcp_server_new_with_options("cpp", "1.0", "{\"pageSize\":10}", &server) ==
              FERROMCP_OK,
          "server_new_with_options");
    check(ferromcp_server_add_tool_json(server,
                                        "{\"name\":\"t\",\"inputSchema\":{\"type\":\"object\"}}",
                                        0, tool, nullptr, nullptr) == FERROMCP_OK,
          "add_tool_json");
    check(ferromcp_server_add_resource(server, "{\"uri\":\"x://r\",\"name\":\"r\"}", nullptr,
                                       resource, nullptr, nullptr) == FERROMCP_OK,
          "add_resource");
    check(ferromcp_server_add_prompt(server, "{\"name\":\"p\"}", prompt, nullptr, nullptr) ==
              FERROMCP_OK,
          "add_prompt");
    check(ferromcp_server_remove_tool(server, "nope") == FERROMCP_NOT_FOUND, "remove_tool");
    check(ferromcp_server_add_tool_json(nullptr, "{}", 0, tool, nullptr, nullptr) ==
              FERROMCP_NULL_ARGUMENT,
          "NULL server");
    ferromcp_server_free(server);

    char *value = nullptr;
    check(ferromcp_json_get("{\"a\":[1,{\"b\":\"c\"}]}", "/a/1/b", &value) == FERROMCP_OK,
          "json_get");
    check(value != nullptr && std::string(value) == "c", "json_get value");
    ferromcp_string_free(value);

    check(std::strcmp(ferromcp_status_message(FERROMCP_INPUT_REQUIRED), "unknown status") != 0,
          "status_message");
    check(ferromcp_call_context(nullptr) == nullptr, "call_context(NULL)");
    if (failures == 0) {
        std::fprintf(stderr, "test_cpp: all checks passed\n");
    }
    return failures == 0 ? 0 : 1;
}
