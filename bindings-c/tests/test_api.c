/* The C API contract without a client: object lifetime, finalizers, NULL and
 * malformed arguments, status codes and messages. Run under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

static const char *OBJECT_SCHEMA = "{\"type\":\"object\"}";

static void never_called(void *userdata, const char *arguments_json, size_t arguments_len,
                         ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    ferromcp_call_fail(call, "not expected to run");
}

/* Each tool's userdata: a heap counter the finalizer frees, plus a global
 * tally so the test can see how often finalizers ran. */
static atomic_int finalized = 0;

static void count_and_free(void *userdata) {
    atomic_fetch_add(&finalized, 1);
    free(userdata);
}

static int *new_userdata(void) {
    int *data = malloc(sizeof *data);
    if (data != NULL) {
        *data = 42;
    }
    return data;
}

static void test_status_messages(void) {
    CHECK(strcmp(ferromcp_status_message(FERROMCP_OK), "success") == 0);
    CHECK(strlen(ferromcp_status_message(FERROMCP_NULL_ARGUMENT)) > 0);
    CHECK(strlen(ferromcp_status_message(FERROMCP_PANIC)) > 0);
    CHECK(strcmp(ferromcp_status_message(12345), "unknown status") == 0);
    CHECK(FERROMCP_OK == 0);
    CHECK(FERROMCP_PANIC == 10);
    /* Outcomes of a request on the connection: their own numbered group. */
    CHECK(FERROMCP_PEER_ERROR == 100);
    CHECK(FERROMCP_TIMEOUT == 101);
    CHECK(FERROMCP_CONNECTION_CLOSED == 102);
    CHECK(strlen(ferromcp_status_message(FERROMCP_TIMEOUT)) > 0);
    CHECK(strcmp(ferromcp_status_message(FERROMCP_TIMEOUT),
                 ferromcp_status_message(FERROMCP_CONNECTION_CLOSED)) != 0);
}

static void test_last_error_code_and_data_without_a_peer_error(void) {
    /* A local failure carries no JSON-RPC code or data. */
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new(NULL, "1.0.0", &server), FERROMCP_NULL_ARGUMENT);
    CHECK(ferromcp_last_error_code() == 0);
    CHECK(ferromcp_last_error_data_json() == NULL);
}

static void test_new_rejects_null_and_leaves_output_alone(void) {
    ferromcp_server *sentinel = (ferromcp_server *)(uintptr_t)0x1;
    ferromcp_server *server = sentinel;
    CHECK_STATUS(ferromcp_server_new(NULL, "1.0.0", &server), FERROMCP_NULL_ARGUMENT);
    CHECK_CONTAINS(ferromcp_last_error_message(), "name");
    CHECK_STATUS(ferromcp_server_new("s", NULL, &server), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_new("s", "1.0.0", NULL), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_new("\xff\xfe", "1.0.0", &server), FERROMCP_INVALID_UTF8);
    CHECK(server == sentinel);
}

static void test_finalizer_runs_exactly_once(void) {
    atomic_store(&finalized, 0);
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("api-test", "0.1.0", &server), FERROMCP_OK);
    CHECK(server != NULL);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(ferromcp_server_add_tool(server, "one", "first", OBJECT_SCHEMA, NULL,
                                         never_called, new_userdata(), count_and_free),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool(server, "two", NULL, OBJECT_SCHEMA,
                                         "{\"type\":\"object\"}", never_called, new_userdata(),
                                         count_and_free),
                 FERROMCP_OK);
    /* A tool without userdata or finalizer is fine too. */
    CHECK_STATUS(ferromcp_server_add_tool(server, "three", NULL, OBJECT_SCHEMA, NULL, never_called,
                                         NULL, NULL),
                 FERROMCP_OK);
    CHECK(atomic_load(&finalized) == 0);

    /* Replacing a tool drops the old registration. */
    CHECK_STATUS(ferromcp_server_add_tool(server, "one", "replaced", OBJECT_SCHEMA, NULL,
                                         never_called, new_userdata(), count_and_free),
                 FERROMCP_OK);
    CHECK(atomic_load(&finalized) == 1);

    ferromcp_server_free(server);
    CHECK(atomic_load(&finalized) == 3);
}

static void test_add_tool_failures_keep_userdata_with_caller(void) {
    atomic_store(&finalized, 0);
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("api-test", "0.1.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return;
    }
    int *data = new_userdata();

    CHECK_STATUS(ferromcp_server_add_tool(NULL, "t", NULL, OBJECT_SCHEMA, NULL, never_called, data,
                                         count_and_free),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_tool(server, NULL, NULL, OBJECT_SCHEMA, NULL, never_called,
                                         data, count_and_free),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_tool(server, "t", NULL, NULL, NULL, never_called, data,
                                         count_and_free),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_tool(server, "t", NULL, OBJECT_SCHEMA, NULL, NULL, data,
                                         count_and_free),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_CONTAINS(ferromcp_last_error_message(), "callback");
    CHECK_STATUS(ferromcp_server_add_tool(server, "t", NULL, "{not json", NULL, never_called, data,
                                         count_and_free),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_server_add_tool(server, "t", NULL, "[1,2]", NULL, never_called, data,
                                         count_and_free),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_server_add_tool(server, "t", NULL, OBJECT_SCHEMA, "42", never_called,
                                         data, count_and_free),
                 FERROMCP_INVALID_JSON);
    /* Well-formed JSON that is not a valid JSON Schema: rejected by core. */
    CHECK_STATUS(ferromcp_server_add_tool(server, "t", NULL, "{\"type\":12}", NULL, never_called,
                                         data, count_and_free),
                 FERROMCP_INVALID_DEFINITION);
    CHECK(strlen(ferromcp_last_error_message()) > 0);

    CHECK(atomic_load(&finalized) == 0);
    ferromcp_server_free(server);
    CHECK(atomic_load(&finalized) == 0);
    free(data); /* still ours: every registration failed */
}

static void test_other_null_arguments(void) {
    CHECK_STATUS(ferromcp_call_respond(NULL, "1"), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_call_respond_result(NULL, "{}"), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_call_fail(NULL, "x"), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_call_fail_jsonrpc(NULL, -32602, "x", NULL), FERROMCP_NULL_ARGUMENT);
    CHECK(!ferromcp_call_is_cancelled(NULL));
    CHECK_STATUS(ferromcp_server_serve_stdio(NULL), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_serve_http(NULL, "127.0.0.1", 0), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_shutdown(NULL), FERROMCP_NULL_ARGUMENT);
    uint16_t port = 7;
    CHECK_STATUS(ferromcp_server_http_port(NULL, &port), FERROMCP_NULL_ARGUMENT);
    CHECK(port == 7);
    ferromcp_server_free(NULL); /* a no-op */

    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("api-test", "0.1.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(ferromcp_server_serve_http(server, NULL, 0), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_http_port(server, NULL), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_http_port(server, &port), FERROMCP_INVALID_STATE);
    CHECK(port == 7);
    CHECK_STATUS(ferromcp_server_serve_http(server, "", 0),
                 FERROMCP_INVALID_ARGUMENT);
    ferromcp_server_free(server);
}

static void test_shutdown_before_serve_is_sticky(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("api-test", "0.1.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK); /* same as once */
    CHECK_STATUS(ferromcp_server_serve_http(server, "127.0.0.1", 0), FERROMCP_OK);
    ferromcp_server_free(server);
}

int main(void) {
    test_status_messages();
    test_last_error_code_and_data_without_a_peer_error();
    test_new_rejects_null_and_leaves_output_alone();
    test_finalizer_runs_exactly_once();
    test_add_tool_failures_keep_userdata_with_caller();
    test_other_null_arguments();
    test_shutdown_before_serve_is_sticky();
    return check_report("test_api");
}
