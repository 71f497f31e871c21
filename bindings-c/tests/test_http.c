/* End to end over Streamable HTTP: a C server on a free port in a thread, a
 * tiny raw-socket HTTP client, tool callbacks that respond at once, later
 * from another thread, fail (as a tool error or a JSON-RPC error), or return
 * invalid JSON; then shutdown and free
 * with every finalizer run exactly once. Run under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "http_util.h"

/* ---- tools ---- */

static atomic_int finalized = 0;
static atomic_int respond_status_of_bad_json = -1;
static atomic_int respond_status_later = -1;

static void count_finalizer(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&finalized, 1);
}

/* Responds with the arguments object itself: shows the JSON handed in. */
static void echo_args(void *userdata, const char *arguments_json, size_t arguments_len,
                      ferromcp_call *call) {
    (void)userdata;
    CHECK(strlen(arguments_json) == arguments_len);
    CHECK_STATUS(ferromcp_call_respond(call, arguments_json), FERROMCP_OK);
}

struct later_job {
    ferromcp_call *call;
};

static void *complete_later(void *arg) {
    struct later_job *job = arg;
    sleep_ms(50);
    CHECK(!ferromcp_call_is_cancelled(job->call));
    atomic_store(&respond_status_later, (int)ferromcp_call_respond(job->call, "\"done later\""));
    free(job);
    return NULL;
}

/* Returns at once; another thread completes the call afterwards. */
static void later(void *userdata, const char *arguments_json, size_t arguments_len,
                  ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    struct later_job *job = malloc(sizeof *job);
    pthread_t thread;
    if (job == NULL) {
        ferromcp_call_fail(call, "out of memory");
        return;
    }
    job->call = call;
    if (pthread_create(&thread, NULL, complete_later, job) != 0) {
        free(job);
        ferromcp_call_fail(call, "cannot start a thread");
        return;
    }
    pthread_detach(thread);
}

static void failing(void *userdata, const char *arguments_json, size_t arguments_len,
                    ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_fail(call, "ValueError: boom"), FERROMCP_OK);
}

static void bad_json(void *userdata, const char *arguments_json, size_t arguments_len,
                     ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    atomic_store(&respond_status_of_bad_json, (int)ferromcp_call_respond(call, "{not json"));
}

static void full_result(void *userdata, const char *arguments_json, size_t arguments_len,
                        ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_respond_result(
                     call, "{\"content\":[{\"type\":\"text\",\"text\":\"custom\"}],"
                           "\"structuredContent\":{\"n\":7}}"),
                 FERROMCP_OK);
}

/* Answers with a JSON-RPC error instead of a tool result. */
static void jsonrpc_error(void *userdata, const char *arguments_json, size_t arguments_len,
                          ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_fail_jsonrpc(call, -32602, "b must not be zero",
                                            "{\"field\":\"b\"}"),
                 FERROMCP_OK);
}

/* ---- a minimal HTTP client (one request per connection) ---- */

/* Sends one tools/call and returns the whole HTTP response (malloc'd), or
 * NULL on a transport failure. */
static char *call_tool(uint16_t port, int id, const char *name, const char *arguments) {
    char body[1024];
    int body_len = snprintf(
        body, sizeof body,
        "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
        "\"arguments\":%s,\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
        "\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
        id, name, arguments);
    char request[2048];
    int request_len = snprintf(request, sizeof request,
                               "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                               "Content-Type: application/json\r\n"
                               "Accept: application/json, text/event-stream\r\n"
                               "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
                               "Mcp-Name: %s\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
                               (unsigned)port, name, body_len, body);
    if (body_len <= 0 || (size_t)body_len >= sizeof body || request_len <= 0 ||
        (size_t)request_len >= sizeof request) {
        return NULL;
    }
    return http_exchange(port, request, (size_t)request_len);
}

/* ---- the test ---- */

/* The client can read the response before ferromcp_call_respond() has
 * returned to the callback that records its status: wait for it. */
static int recorded_status(atomic_int *slot) {
    for (int i = 0; i < 250 && atomic_load(slot) == -1; i++) {
        sleep_ms(20);
    }
    return atomic_load(slot);
}

struct serve_job {
    ferromcp_server *server;
    ferromcp_status status;
};

static void *serve(void *arg) {
    struct serve_job *job = arg;
    job->status = ferromcp_server_serve_http(job->server, "127.0.0.1", 0);
    return NULL;
}

static void add(ferromcp_server *server, const char *name, ferromcp_tool_callback callback,
                const char *output_schema) {
    CHECK_STATUS(ferromcp_server_add_tool(server, name, "a test tool", "{\"type\":\"object\"}",
                                         output_schema, callback, NULL, count_finalizer),
                 FERROMCP_OK);
}

int main(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("http-test", "0.1.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return check_report("test_http");
    }
    add(server, "echo_args", echo_args, NULL);
    add(server, "later", later, NULL);
    add(server, "failing", failing, NULL);
    add(server, "bad_json", bad_json, NULL);
    add(server, "full_result", full_result, NULL);
    add(server, "jsonrpc_error", jsonrpc_error, NULL);

    struct serve_job job = {server, FERROMCP_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve, &job) == 0);

    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(port != 0);
    /* A second serve call on the same server is refused while serving. */
    CHECK_STATUS(ferromcp_server_serve_http(server, "127.0.0.1", 0), FERROMCP_INVALID_STATE);

    char *r = call_tool(port, 1, "echo_args", "{\"text\":\"hi\",\"n\":[1,2]}");
    CHECK_CONTAINS(r, "HTTP/1.1 200");
    CHECK_CONTAINS(r, "\"jsonrpc\":\"2.0\"");
    CHECK_CONTAINS(r, "\"id\":1");
    /* The arguments came back as text content (no output schema). */
    CHECK_CONTAINS(r, "\\\"text\\\":\\\"hi\\\"");
    CHECK(r == NULL || strstr(r, "\"isError\":true") == NULL);
    free(r);

    r = call_tool(port, 2, "later", "{}");
    CHECK_CONTAINS(r, "\"text\":\"done later\"");
    free(r);
    CHECK(recorded_status(&respond_status_later) == FERROMCP_OK);

    r = call_tool(port, 3, "failing", "{}");
    CHECK_CONTAINS(r, "\"isError\":true");
    CHECK_CONTAINS(r, "ValueError: boom");
    free(r);

    r = call_tool(port, 4, "bad_json", "{}");
    CHECK_CONTAINS(r, "HTTP/1.1 200");
    CHECK_CONTAINS(r, "\"isError\":true");
    CHECK_CONTAINS(r, "invalid JSON");
    free(r);
    CHECK(recorded_status(&respond_status_of_bad_json) == FERROMCP_INVALID_JSON);

    /* The server keeps answering after a failing handler. */
    r = call_tool(port, 5, "echo_args", "{\"after\":true}");
    CHECK_CONTAINS(r, "\\\"after\\\":true");
    CHECK(r == NULL || strstr(r, "\"isError\":true") == NULL);
    free(r);

    r = call_tool(port, 6, "full_result", "{}");
    CHECK_CONTAINS(r, "\"text\":\"custom\"");
    CHECK_CONTAINS(r, "\"structuredContent\":{\"n\":7}");
    free(r);

    r = call_tool(port, 7, "jsonrpc_error", "{}");
    CHECK_CONTAINS(r, "\"error\":{");
    CHECK_CONTAINS(r, "\"code\":-32602");
    CHECK_CONTAINS(r, "\"message\":\"b must not be zero\"");
    CHECK_CONTAINS(r, "\"data\":{\"field\":\"b\"}");
    CHECK(r == NULL || strstr(r, "\"isError\"") == NULL);
    free(r);

    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    pthread_join(thread, NULL);
    CHECK_STATUS(job.status, FERROMCP_OK);
    ferromcp_server_free(server);

    /* Connections may still hold the tools for a moment after serve returns
     * (see ferromcp_userdata_free): wait for all six finalizers. */
    for (int i = 0; i < 250 && atomic_load(&finalized) < 6; i++) {
        sleep_ms(20);
    }
    CHECK(atomic_load(&finalized) == 6);
    sleep_ms(100);
    CHECK(atomic_load(&finalized) == 6); /* and never more */
    return check_report("test_http");
}
