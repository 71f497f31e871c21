// The header compiles as C++17 and its functions link and run from C++:
// a server with a tool, a resource and a prompt, a middleware link and a
// visibility rule reached through an in-memory client, a JSON lookup,
// statuses.
// (The C tests cover behaviour; this checks the header's C++ face.)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "ferromcp.h"

namespace {

int failures = 0;
std::atomic<int> finalized{0};

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

extern "C" void pass_on(void *, const ferromcp_middleware_request *request, ferromcp_next *next,
                     ferromcp_call *call) {
    char *result = nullptr;
    if (ferromcp_middleware_request_method(request) != nullptr &&
        ferromcp_next_run(next, nullptr, &result) == FERROMCP_OK) {
        ferromcp_call_respond(call, result);
        ferromcp_string_free(result);
    } else {
        ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(), ferromcp_last_error_message(),
                                   ferromcp_last_error_data_json());
    }
}

extern "C" bool visible(void *, const char *, int kind, const char *) {
    return kind != FERROMCP_VISIBLE_PROMPT;
}

extern "C" void count_finalizer(void *) { ++finalized; }

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
    check(ferromcp_server_add_middleware(server, pass_on, nullptr, count_finalizer) == FERROMCP_OK,
          "add_middleware");
    check(ferromcp_server_add_builtin_middleware(server, "maskErrors", nullptr) == FERROMCP_OK,
          "add_builtin_middleware");
    check(ferromcp_server_set_visibility(server, visible, nullptr, nullptr) == FERROMCP_OK,
          "set_visibility");
    ferromcp_client *client = nullptr;
    check(ferromcp_client_connect_in_memory(server, nullptr, &client) == FERROMCP_OK,
          "connect_in_memory");
    char *listed = nullptr;
    check(ferromcp_client_list(client, FERROMCP_LIST_PROMPTS, nullptr, &listed) == FERROMCP_OK,
          "list through the link");
    check(listed != nullptr && std::strstr(listed, "\"p\"") == nullptr, "prompt hidden");
    ferromcp_string_free(listed);
    ferromcp_client_free(client);
    check(ferromcp_server_clear_visibility(server) == FERROMCP_OK, "clear_visibility");
    check(ferromcp_server_add_tool_json(nullptr, "{}", 0, tool, nullptr, nullptr) ==
              FERROMCP_NULL_ARGUMENT,
          "NULL server");
    ferromcp_server_free(server);
    // The link goes with the server, once the in-memory connection is gone.
    for (int i = 0; i < 250 && finalized.load() < 1; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    check(finalized.load() == 1, "middleware finalizer");

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
