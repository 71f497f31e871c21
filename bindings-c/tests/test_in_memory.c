/* A client of a server of the same process (ferromcp_client_connect_in_memory()):
 * a C tool answers through the in-memory pipe, an unknown tool is the
 * server's error, bad arguments are refused, and the tool's finalizer runs
 * once after client and server are freed. Run from
 * the repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

static atomic_int finalized = 0;

static void count_finalizer(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&finalized, 1);
}

static void echo(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_len;
    char *text = NULL;
    CHECK_STATUS(ferromcp_json_get(arguments_json, "/text", &text), FERROMCP_OK);
    char answer[256];
    snprintf(answer, sizeof answer, "\"echo: %s\"", text != NULL ? text : "");
    ferromcp_string_free(text);
    CHECK_STATUS(ferromcp_call_respond(call, answer), FERROMCP_OK);
}

int main(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("memory", "1.0.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return check_report("test_in_memory");
    }
    CHECK_STATUS(ferromcp_server_add_tool(
                     server, "echo", "Echoes its text",
                     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}", NULL,
                     echo, NULL, count_finalizer),
                 FERROMCP_OK);

    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_in_memory(NULL, NULL, &client), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, NULL, NULL), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, NULL, &client), FERROMCP_OK);
    if (client == NULL) {
        return check_report("test_in_memory");
    }

    char *list = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &list), FERROMCP_OK);
    CHECK_CONTAINS(list, "\"echo\"");
    ferromcp_string_free(list);

    for (int i = 0; i < 3; i++) {
        char *result = NULL;
        CHECK_STATUS(ferromcp_client_call_tool(client, "echo", "{\"text\":\"hi\"}", 10000, NULL,
                                              NULL, NULL, &result),
                     FERROMCP_OK);
        char *text = NULL;
        CHECK_STATUS(ferromcp_json_get(result, "/content/0/text", &text), FERROMCP_OK);
        CHECK(text != NULL && strcmp(text, "echo: hi") == 0);
        ferromcp_string_free(text);
        ferromcp_string_free(result);
    }
    /* An unknown tool is the server's error, as over any transport. */
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "nope", "{}", 10000, NULL, NULL, NULL, &result),
                 FERROMCP_PEER_ERROR);
    ferromcp_string_free(result);

    ferromcp_client_free(client);
    ferromcp_server_free(server);
    for (int i = 0; i < 250 && atomic_load(&finalized) < 1; i++) {
        sleep_ms(20);
    }
    CHECK(atomic_load(&finalized) == 1);
    return check_report("test_in_memory");
}
