/* The C program every package check builds against an installed ferromcp
 * (scripts/test_dist.sh, scripts/test_cross.sh, scripts/smoke_installed.py):
 * serves one tool, `echo`, over stdio; the checks' clients call it. */
#include <ferromcp.h>
#include <stdio.h>

static void echo(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    /* arguments_json is {"text":"..."}: answer with the text value as JSON. */
    char text[512];
    const char *start = arguments_json;
    const char *key = "\"text\":";
    size_t i = 0, k = 0;
    for (; i < arguments_len && key[k]; i++) k = arguments_json[i] == key[k] ? k + 1 : 0;
    start = arguments_json + i;
    size_t n = (size_t)(arguments_json + arguments_len - start);
    while (n > 0 && start[n - 1] != '"') n--;
    snprintf(text, sizeof text, "%.*s", (int)n, start);
    ferromcp_call_respond(call, text);
}

int main(void) {
    ferromcp_server *server = NULL;
    if (ferromcp_server_new("c-echo", "1.0.0", &server) != FERROMCP_OK) return 1;
    if (ferromcp_server_add_tool(server, "echo", "Returns the text.",
            "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},\"required\":[\"text\"]}",
            NULL, echo, NULL, NULL) != FERROMCP_OK) return 1;
    ferromcp_status status = ferromcp_server_serve_stdio(server);
    ferromcp_server_free(server);
    return status == FERROMCP_OK ? 0 : 1;
}
