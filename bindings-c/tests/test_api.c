/* The C API contract without a client: object lifetime, finalizers, NULL and
 * malformed arguments, status codes and messages. Run under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

static const char *OBJECT_SCHEMA = "{\"type\":\"object\"}";

static void never_called(void *userdata, const char *arguments_json, size_t arguments_len,
                         polymcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    polymcp_call_fail(call, "not expected to run");
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
    CHECK(strcmp(polymcp_status_message(POLYMCP_OK), "success") == 0);
    CHECK(strlen(polymcp_status_message(POLYMCP_NULL_ARGUMENT)) > 0);
    CHECK(strlen(polymcp_status_message(POLYMCP_PANIC)) > 0);
    CHECK(strcmp(polymcp_status_message(12345), "unknown status") == 0);
    CHECK(POLYMCP_OK == 0);
    CHECK(POLYMCP_PANIC == 10);
}

static void test_new_rejects_null_and_leaves_output_alone(void) {
    polymcp_server *sentinel = (polymcp_server *)(uintptr_t)0x1;
    polymcp_server *server = sentinel;
    CHECK_STATUS(polymcp_server_new(NULL, "1.0.0", &server), POLYMCP_NULL_ARGUMENT);
    CHECK_CONTAINS(polymcp_last_error_message(), "name");
    CHECK_STATUS(polymcp_server_new("s", NULL, &server), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_new("s", "1.0.0", NULL), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_new("\xff\xfe", "1.0.0", &server), POLYMCP_INVALID_UTF8);
    CHECK(server == sentinel);
}

static void test_finalizer_runs_exactly_once(void) {
    atomic_store(&finalized, 0);
    polymcp_server *server = NULL;
    CHECK_STATUS(polymcp_server_new("api-test", "0.1.0", &server), POLYMCP_OK);
    CHECK(server != NULL);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(polymcp_server_add_tool(server, "one", "first", OBJECT_SCHEMA, NULL,
                                         never_called, new_userdata(), count_and_free),
                 POLYMCP_OK);
    CHECK_STATUS(polymcp_server_add_tool(server, "two", NULL, OBJECT_SCHEMA,
                                         "{\"type\":\"object\"}", never_called, new_userdata(),
                                         count_and_free),
                 POLYMCP_OK);
    /* A tool without userdata or finalizer is fine too. */
    CHECK_STATUS(polymcp_server_add_tool(server, "three", NULL, OBJECT_SCHEMA, NULL, never_called,
                                         NULL, NULL),
                 POLYMCP_OK);
    CHECK(atomic_load(&finalized) == 0);

    /* Replacing a tool drops the old registration. */
    CHECK_STATUS(polymcp_server_add_tool(server, "one", "replaced", OBJECT_SCHEMA, NULL,
                                         never_called, new_userdata(), count_and_free),
                 POLYMCP_OK);
    CHECK(atomic_load(&finalized) == 1);

    polymcp_server_free(server);
    CHECK(atomic_load(&finalized) == 3);
}

static void test_add_tool_failures_keep_userdata_with_caller(void) {
    atomic_store(&finalized, 0);
    polymcp_server *server = NULL;
    CHECK_STATUS(polymcp_server_new("api-test", "0.1.0", &server), POLYMCP_OK);
    if (server == NULL) {
        return;
    }
    int *data = new_userdata();

    CHECK_STATUS(polymcp_server_add_tool(NULL, "t", NULL, OBJECT_SCHEMA, NULL, never_called, data,
                                         count_and_free),
                 POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_add_tool(server, NULL, NULL, OBJECT_SCHEMA, NULL, never_called,
                                         data, count_and_free),
                 POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_add_tool(server, "t", NULL, NULL, NULL, never_called, data,
                                         count_and_free),
                 POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_add_tool(server, "t", NULL, OBJECT_SCHEMA, NULL, NULL, data,
                                         count_and_free),
                 POLYMCP_NULL_ARGUMENT);
    CHECK_CONTAINS(polymcp_last_error_message(), "callback");
    CHECK_STATUS(polymcp_server_add_tool(server, "t", NULL, "{not json", NULL, never_called, data,
                                         count_and_free),
                 POLYMCP_INVALID_JSON);
    CHECK_STATUS(polymcp_server_add_tool(server, "t", NULL, "[1,2]", NULL, never_called, data,
                                         count_and_free),
                 POLYMCP_INVALID_JSON);
    CHECK_STATUS(polymcp_server_add_tool(server, "t", NULL, OBJECT_SCHEMA, "42", never_called,
                                         data, count_and_free),
                 POLYMCP_INVALID_JSON);
    /* Well-formed JSON that is not a valid JSON Schema: rejected by core. */
    CHECK_STATUS(polymcp_server_add_tool(server, "t", NULL, "{\"type\":12}", NULL, never_called,
                                         data, count_and_free),
                 POLYMCP_INVALID_DEFINITION);
    CHECK(strlen(polymcp_last_error_message()) > 0);

    CHECK(atomic_load(&finalized) == 0);
    polymcp_server_free(server);
    CHECK(atomic_load(&finalized) == 0);
    free(data); /* still ours: every registration failed */
}

static void test_other_null_arguments(void) {
    CHECK_STATUS(polymcp_call_respond(NULL, "1"), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_call_respond_result(NULL, "{}"), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_call_fail(NULL, "x"), POLYMCP_NULL_ARGUMENT);
    CHECK(!polymcp_call_is_cancelled(NULL));
    CHECK_STATUS(polymcp_server_serve_stdio(NULL), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_serve_http(NULL, "127.0.0.1", 0), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_shutdown(NULL), POLYMCP_NULL_ARGUMENT);
    uint16_t port = 7;
    CHECK_STATUS(polymcp_server_http_port(NULL, &port), POLYMCP_NULL_ARGUMENT);
    CHECK(port == 7);
    polymcp_server_free(NULL); /* a no-op */

    polymcp_server *server = NULL;
    CHECK_STATUS(polymcp_server_new("api-test", "0.1.0", &server), POLYMCP_OK);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(polymcp_server_serve_http(server, NULL, 0), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_http_port(server, NULL), POLYMCP_NULL_ARGUMENT);
    CHECK_STATUS(polymcp_server_http_port(server, &port), POLYMCP_INVALID_STATE);
    CHECK(port == 7);
    CHECK_STATUS(polymcp_server_serve_http(server, "", 0),
                 POLYMCP_INVALID_ARGUMENT);
    polymcp_server_free(server);
}

static void test_shutdown_before_serve_is_sticky(void) {
    polymcp_server *server = NULL;
    CHECK_STATUS(polymcp_server_new("api-test", "0.1.0", &server), POLYMCP_OK);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(polymcp_server_shutdown(server), POLYMCP_OK);
    CHECK_STATUS(polymcp_server_shutdown(server), POLYMCP_OK); /* same as once */
    CHECK_STATUS(polymcp_server_serve_http(server, "127.0.0.1", 0), POLYMCP_OK);
    polymcp_server_free(server);
}

int main(void) {
    test_status_messages();
    test_new_rejects_null_and_leaves_output_alone();
    test_finalizer_runs_exactly_once();
    test_add_tool_failures_keep_userdata_with_caller();
    test_other_null_arguments();
    test_shutdown_before_serve_is_sticky();
    return check_report("test_api");
}
