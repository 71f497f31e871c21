/* Client middleware from C (ferromcp_client_add_middleware()), against one
 * C server reached in memory and over HTTP, in both eras (2026-07-28 and
 * 2025-11-25): links run in the order added around every request; a link
 * sees the method, name, params, extra _meta and timeout, and may change
 * params, _meta and timeout for the rest of the chain (the server sees
 * them); a link answering by itself short-circuits (the server never sees
 * the call) with a result or a JSON-RPC error whose code and data reach
 * the caller; the server's JSON-RPC error reaches the link and passes on
 * unchanged, and so does a timeout; a link may call the client inside
 * (its request goes through the chain again); a link may return at once
 * and finish on a thread of its own; a caller's cancel handle ends a
 * link's own wait; every finalizer runs once. Run from the repository
 * root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

/* The trace context the outer link adds to the echo call's _meta. */
#define TRACEPARENT "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

/* ---- the log the links write ---- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[8192];

static void log_add(const char *text) {
    pthread_mutex_lock(&log_lock);
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s|", text);
    pthread_mutex_unlock(&log_lock);
}

static void log_clear(void) {
    pthread_mutex_lock(&log_lock);
    log_text[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

static bool log_is(const char *expected) {
    pthread_mutex_lock(&log_lock);
    bool same = strcmp(log_text, expected) == 0;
    if (!same) fprintf(stderr, "log: %s\nexpected: %s\n", log_text, expected);
    pthread_mutex_unlock(&log_lock);
    return same;
}

/* ---- the server ---- */

static atomic_int echo_calls = 0;

/* The trace context of the latest echo call (from its _meta), or "". */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static char server_trace[128];

/* Answers with its arguments, as JSON text content. */
static void echo(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_len;
    atomic_fetch_add(&echo_calls, 1);
    char *trace = NULL;
    ferromcp_context_traceparent(ferromcp_call_context(call), &trace);
    pthread_mutex_lock(&seen_lock);
    snprintf(server_trace, sizeof server_trace, "%s", trace != NULL ? trace : "");
    pthread_mutex_unlock(&seen_lock);
    ferromcp_string_free(trace);
    CHECK_STATUS(ferromcp_call_respond(call, arguments_json), FERROMCP_OK);
}

static void fail(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_fail_jsonrpc(call, -32001, "the server says no", "{\"k\":1}"),
                 FERROMCP_OK);
}

/* Waits until its request is cancelled (at most 3 s). */
static void slow(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    for (int i = 0; i < 300 && !ferromcp_call_is_cancelled(call); i++) sleep_ms(10);
    ferromcp_call_respond(call, "\"too late\"");
}

/* The params of the latest tools/call the server saw. */
static char server_seen[4096];

static void pass_on_server(ferromcp_status status, char *result, ferromcp_call *call) {
    if (status == FERROMCP_OK) {
        ferromcp_status answered = ferromcp_call_respond(call, result);
        CHECK(answered == FERROMCP_OK || answered == FERROMCP_REQUEST_CANCELLED);
    } else if (status == FERROMCP_PEER_ERROR) {
        ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(), ferromcp_last_error_message(),
                                   ferromcp_last_error_data_json());
    } else {
        ferromcp_call_fail(call, ferromcp_last_error_message());
    }
    ferromcp_string_free(result);
}

/* A server link that records what reaches the server. */
static void server_link(void *userdata, const ferromcp_middleware_request *request,
                        ferromcp_next *next, ferromcp_call *call) {
    (void)userdata;
    if (strcmp(ferromcp_middleware_request_method(request), "tools/call") == 0) {
        pthread_mutex_lock(&seen_lock);
        snprintf(server_seen, sizeof server_seen, "%s",
                 ferromcp_middleware_request_params_json(request));
        pthread_mutex_unlock(&seen_lock);
    }
    char *result = NULL;
    ferromcp_status status = ferromcp_next_run(next, NULL, &result);
    pass_on_server(status, result, call);
}

static bool server_trace_is(const char *expected) {
    pthread_mutex_lock(&seen_lock);
    bool same = strcmp(server_trace, expected) == 0;
    if (!same) fprintf(stderr, "server trace: %s\n(not %s)\n", server_trace, expected);
    pthread_mutex_unlock(&seen_lock);
    return same;
}

static bool server_saw(const char *needle) {
    pthread_mutex_lock(&seen_lock);
    bool found = strstr(server_seen, needle) != NULL;
    if (!found) fprintf(stderr, "server saw: %s\n(no %s)\n", server_seen, needle);
    pthread_mutex_unlock(&seen_lock);
    return found;
}

static void add_tool(ferromcp_server *server, const char *name, ferromcp_tool_callback callback) {
    CHECK_STATUS(ferromcp_server_add_tool(server, name, NULL, "{\"type\":\"object\"}", NULL,
                                         callback, NULL, NULL),
                 FERROMCP_OK);
}

/* ---- the client's links ---- */

struct link_data {
    ferromcp_client *client;
    atomic_int finalized;
};

static void count_finalizer(void *userdata) {
    atomic_fetch_add(&((struct link_data *)userdata)->finalized, 1);
}

/* Answers `call` with what ferromcp_client_next_run() returned. */
static void pass_on(ferromcp_status status, char *result, ferromcp_call *call) {
    if (status == FERROMCP_OK) {
        CHECK_STATUS(ferromcp_call_respond(call, result), FERROMCP_OK);
    } else if (status == FERROMCP_PEER_ERROR) {
        CHECK_STATUS(ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(),
                                                ferromcp_last_error_message(),
                                                ferromcp_last_error_data_json()),
                     FERROMCP_OK);
    } else {
        /* The same failure reaches the caller (a timeout stays a timeout). */
        ferromcp_call_fail(call, ferromcp_last_error_message());
    }
    ferromcp_string_free(result);
}

static bool named(const ferromcp_client_middleware_request *request, const char *name) {
    const char *got = ferromcp_client_middleware_request_name(request);
    return got != NULL && strcmp(got, name) == 0;
}

/* Status of the refused runs of the outer link, for the main thread. */
static atomic_int bad_params_status = -1;
static atomic_int bad_meta_status = -1;
static atomic_int second_run_status = -1;
static atomic_int cancelled_seen = 0;
static atomic_int cancelled_next_status = -1;
static atomic_int cancelled_respond_status = -1;

/* The first link added: changes the echo call's params, _meta and
 * timeout, and its result; refuses `forbidden`; answers `cached` itself;
 * calls the client inside for `nested`; waits for cancellation in `hang`. */
static void outer(void *userdata, const ferromcp_client_middleware_request *request,
                  ferromcp_client_next *next, ferromcp_call *call) {
    struct link_data *data = userdata;
    const char *method = ferromcp_client_middleware_request_method(request);
    const char *params = ferromcp_client_middleware_request_params_json(request);
    const char *meta = ferromcp_client_middleware_request_meta_json(request);
    CHECK(method != NULL && params != NULL && meta != NULL);
    CHECK(ferromcp_call_context(call) == NULL);
    /* The params as they will be sent: no _meta of the client's. */
    CHECK(strstr(params, "\"_meta\"") == NULL);
    CHECK(strcmp(meta, "{}") == 0);
    char line[256];
    snprintf(line, sizeof line, "outer>%s", method);
    log_add(line);

    if (named(request, "forbidden")) {
        /* Short-circuit with a JSON-RPC error. */
        CHECK_STATUS(ferromcp_call_fail_jsonrpc(call, -32602, "refused by the client",
                                                "{\"why\":\"forbidden\"}"),
                     FERROMCP_OK);
        return;
    }
    if (named(request, "cached")) {
        /* Short-circuit with a result of the link's own. */
        CHECK_STATUS(
            ferromcp_call_respond(call, "{\"content\":[{\"type\":\"text\",\"text\":\"cached\"}]}"),
            FERROMCP_OK);
        return;
    }
    if (named(request, "nested")) {
        /* A client call inside a link: it goes through the chain too. */
        char *tools = NULL;
        CHECK_STATUS(ferromcp_client_list(data->client, FERROMCP_LIST_TOOLS, NULL, &tools),
                     FERROMCP_OK);
        bool saw = tools != NULL && strstr(tools, "\"echo\"") != NULL;
        ferromcp_string_free(tools);
        CHECK_STATUS(ferromcp_call_respond(call, saw ? "{\"content\":[{\"type\":\"text\",\"text\":"
                                                       "\"nested saw echo\"}]}"
                                                     : "{\"content\":[]}"),
                     FERROMCP_OK);
        return;
    }
    if (named(request, "hang")) {
        /* The caller's cancel handle ends the call while the link waits. */
        for (int i = 0; i < 500 && !ferromcp_call_is_cancelled(call); i++) sleep_ms(10);
        atomic_store(&cancelled_seen, ferromcp_call_is_cancelled(call) ? 1 : 0);
        char *result = NULL;
        atomic_store(&cancelled_next_status, ferromcp_client_next_run(next, NULL, NULL, 0, &result));
        CHECK(result == NULL);
        atomic_store(&cancelled_respond_status, ferromcp_call_respond(call, "{\"content\":[]}"));
        return;
    }

    char *result = NULL;
    if (named(request, "echo")) {
        CHECK(strcmp(method, "tools/call") == 0);
        CHECK_CONTAINS(params, "\"arguments\":{\"text\":\"hi\"}");
        CHECK(ferromcp_client_middleware_request_timeout_ms(request) == 7000);
        /* Params or _meta that are not objects are refused, and next stays
         * usable. */
        atomic_store(&bad_params_status, ferromcp_client_next_run(next, "[1]", NULL, 0, &result));
        atomic_store(&bad_meta_status, ferromcp_client_next_run(next, NULL, "{", 0, &result));
        /* Changed on the way out... */
        ferromcp_status status = ferromcp_client_next_run(
            next, "{\"name\":\"echo\",\"arguments\":{\"text\":\"changed\"}}",
            "{\"traceparent\":\"" TRACEPARENT "\"}", 9000, &result);
        CHECK_STATUS(status, FERROMCP_OK);
        if (status != FERROMCP_OK) {
            pass_on(status, result, call);
            return;
        }
        /* At most once. */
        char *again = NULL;
        atomic_store(&second_run_status, ferromcp_client_next_run(next, NULL, NULL, 0, &again));
        CHECK(again == NULL);
        /* ...and on the way back: the raw result object, with a member
         * of the link's own. */
        CHECK(result[0] == '{');
        CHECK_CONTAINS(result, "\"content\":[");
        size_t len = strlen(result) + 64;
        char *changed = malloc(len);
        snprintf(changed, len, "{\"structuredContent\":{\"by\":\"outer\"},%s", result + 1);
        ferromcp_string_free(result);
        /* (Logged first: the caller goes on once the call is answered.) */
        log_add("outer<");
        CHECK_STATUS(ferromcp_call_respond(call, changed), FERROMCP_OK);
        free(changed);
        return;
    }
    ferromcp_status status = ferromcp_client_next_run(next, NULL, NULL, 0, &result);
    log_add("outer<");
    pass_on(status, result, call);
}

/* Finishes a call later on a thread of its own. */
struct later_job {
    const ferromcp_client_middleware_request *request;
    ferromcp_client_next *next;
    ferromcp_call *call;
};

static pthread_t later_thread;
static atomic_int later_started = 0;

static void *finish_later(void *arg) {
    struct later_job *job = arg;
    sleep_ms(50);
    /* The request and next outlive the callback until the call completes. */
    CHECK(strcmp(ferromcp_client_middleware_request_method(job->request), "tools/call") == 0);
    char *result = NULL;
    ferromcp_status status = ferromcp_client_next_run(
        job->next, "{\"name\":\"echo\",\"arguments\":{\"text\":\"from a thread\"}}", NULL, 0,
        &result);
    CHECK_STATUS(status, FERROMCP_OK);
    pass_on(status, result, job->call);
    free(job);
    return NULL;
}

/* The second link added: logs what it sees (the outer link's changes);
 * shortens the timeout of `slow`; finishes `later` on another thread. */
static void inner(void *userdata, const ferromcp_client_middleware_request *request,
                  ferromcp_client_next *next, ferromcp_call *call) {
    (void)userdata;
    const char *method = ferromcp_client_middleware_request_method(request);
    char line[512];
    snprintf(line, sizeof line, "inner>%s meta=%s timeout=%llu", method,
             ferromcp_client_middleware_request_meta_json(request),
             (unsigned long long)ferromcp_client_middleware_request_timeout_ms(request));
    log_add(line);
    if (named(request, "echo")) {
        CHECK_CONTAINS(ferromcp_client_middleware_request_params_json(request),
                       "\"arguments\":{\"text\":\"changed\"}");
    }
    if (named(request, "later")) {
        struct later_job *job = malloc(sizeof *job);
        job->request = request;
        job->next = next;
        job->call = call;
        CHECK(pthread_create(&later_thread, NULL, finish_later, job) == 0);
        atomic_store(&later_started, 1);
        return;
    }
    char *result = NULL;
    ferromcp_status status =
        ferromcp_client_next_run(next, NULL, NULL, named(request, "slow") ? 200 : 0, &result);
    log_add("inner<");
    pass_on(status, result, call);
}

/* ---- helpers ---- */

static ferromcp_status call_tool(ferromcp_client *client, const char *name, const char *arguments,
                                 uint64_t timeout_ms, char **out_result) {
    *out_result = NULL;
    return ferromcp_client_call_tool(client, name, arguments, timeout_ms, NULL, NULL, NULL,
                                     out_result);
}

/* One of several echo calls made at once through the chain. */
static void *echo_at_once(void *arg) {
    char *result = NULL;
    ferromcp_status status = call_tool(arg, "echo", "{\"text\":\"hi\"}", 7000, &result);
    CHECK_STATUS(status, FERROMCP_OK);
    CHECK_CONTAINS(result, "changed");
    ferromcp_string_free(result);
    return NULL;
}

static void *fire_later(void *arg) {
    sleep_ms(200);
    ferromcp_cancel_handle_cancel(arg);
    return NULL;
}

static void wait_for(atomic_int *value, int unset) {
    for (int i = 0; i < 1000 && atomic_load(value) == unset; i++) sleep_ms(10);
}

/* ---- the tests ---- */

static void test_arguments(ferromcp_server *server) {
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, NULL, &client), FERROMCP_OK);
    struct link_data kept = {client, 0};
    CHECK_STATUS(ferromcp_client_add_middleware(NULL, outer, &kept, count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    /* A NULL callback: the userdata stays the caller's (no finalizer). */
    CHECK_STATUS(ferromcp_client_add_middleware(client, NULL, &kept, count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_next_run(NULL, NULL, NULL, 0, &result), FERROMCP_NULL_ARGUMENT);
    CHECK(result == NULL);
    CHECK(ferromcp_client_middleware_request_method(NULL) == NULL);
    CHECK(ferromcp_client_middleware_request_name(NULL) == NULL);
    CHECK(ferromcp_client_middleware_request_params_json(NULL) == NULL);
    CHECK(ferromcp_client_middleware_request_meta_json(NULL) == NULL);
    CHECK(ferromcp_client_middleware_request_timeout_ms(NULL) == 0);
    ferromcp_client_free(client);
    CHECK(atomic_load(&kept.finalized) == 0);
}

/* One client (in memory or over HTTP, in one era) through every case. */
static void test_chain(ferromcp_server *server, uint16_t port, const char *era,
                       const char *version) {
    fprintf(stderr, "client middleware: %s, %s\n", port != 0 ? "HTTP" : "in memory", era);
    char options_json[128];
    snprintf(options_json, sizeof options_json, "{\"era\":\"%s\"}", era);
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new(options_json, &options), FERROMCP_OK);
    ferromcp_client *client = NULL;
    if (port != 0) {
        char url[64];
        snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)port);
        CHECK_STATUS(ferromcp_client_connect_http(url, NULL, options, &client), FERROMCP_OK);
    } else {
        CHECK_STATUS(ferromcp_client_connect_in_memory(server, options, &client), FERROMCP_OK);
    }
    ferromcp_client_options_free(options);
    if (client == NULL) return;
    struct link_data outer_data = {client, 0}, inner_data = {client, 0};
    CHECK_STATUS(ferromcp_client_add_middleware(client, outer, &outer_data, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_client_add_middleware(client, inner, &inner_data, count_finalizer),
                 FERROMCP_OK);

    /* Over HTTP the client lists the tools before its first call (to mirror
     * arguments in headers), through the chain: done here, before the log
     * is read. */
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &result), FERROMCP_OK);
    ferromcp_string_free(result);

    /* Order; params, _meta and timeout changed by the outer link reach the
     * inner link and the server; the result changed on the way back. */
    log_clear();
    CHECK_STATUS(call_tool(client, "echo", "{\"text\":\"hi\"}", 7000, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "changed");
    CHECK_CONTAINS(result, "\"structuredContent\":{\"by\":\"outer\"}");
    ferromcp_string_free(result);
    CHECK(log_is("outer>tools/call|"
                 "inner>tools/call meta={\"traceparent\":\"" TRACEPARENT "\"} timeout=9000|"
                 "inner<|outer<|"));
    CHECK(server_saw("\"arguments\":{\"text\":\"changed\"}"));
    CHECK(server_trace_is(TRACEPARENT));
    CHECK(atomic_load(&bad_params_status) == FERROMCP_INVALID_JSON);
    CHECK(atomic_load(&bad_meta_status) == FERROMCP_INVALID_JSON);
    CHECK(atomic_load(&second_run_status) == FERROMCP_INVALID_STATE);
    char *version_now = NULL;
    CHECK_STATUS(ferromcp_client_protocol_version(client, &version_now), FERROMCP_OK);
    CHECK(version_now != NULL && strcmp(version_now, version) == 0);
    ferromcp_string_free(version_now);

    /* Lists go through the chain too. */
    log_clear();
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "\"echo\"");
    ferromcp_string_free(result);
    CHECK(log_is("outer>tools/list|inner>tools/list meta={} timeout=0|inner<|outer<|"));

    /* Short-circuit with an error: neither the inner link nor the server
     * sees the call; the code and data reach the caller. */
    int echoes = atomic_load(&echo_calls);
    log_clear();
    CHECK_STATUS(call_tool(client, "forbidden", "{}", 0, &result), FERROMCP_PEER_ERROR);
    CHECK(result == NULL);
    CHECK(ferromcp_last_error_code() == -32602);
    CHECK_CONTAINS(ferromcp_last_error_message(), "refused by the client");
    CHECK_CONTAINS(ferromcp_last_error_data_json(), "\"why\":\"forbidden\"");
    CHECK(log_is("outer>tools/call|"));

    /* Short-circuit with a result of the link's own. */
    log_clear();
    CHECK_STATUS(call_tool(client, "cached", "{}", 0, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "\"text\":\"cached\"");
    ferromcp_string_free(result);
    CHECK(log_is("outer>tools/call|"));
    CHECK(atomic_load(&echo_calls) == echoes);

    /* The server's JSON-RPC error passes through both links unchanged. */
    CHECK_STATUS(call_tool(client, "fail", "{}", 0, &result), FERROMCP_PEER_ERROR);
    CHECK(ferromcp_last_error_code() == -32001);
    CHECK_CONTAINS(ferromcp_last_error_message(), "the server says no");
    CHECK_CONTAINS(ferromcp_last_error_data_json(), "\"k\":1");

    /* A timeout the inner link set stays a timeout for the caller. */
    CHECK_STATUS(call_tool(client, "slow", "{}", 0, &result), FERROMCP_TIMEOUT);

    /* A link calling the client inside: its list goes through the chain. */
    log_clear();
    CHECK_STATUS(call_tool(client, "nested", "{}", 0, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "nested saw echo");
    ferromcp_string_free(result);
    CHECK(log_is("outer>tools/call|outer>tools/list|inner>tools/list meta={} timeout=0|"
                 "inner<|outer<|"));

    /* A link that returns at once and finishes on a thread of its own. */
    atomic_store(&later_started, 0);
    CHECK_STATUS(call_tool(client, "later", "{}", 0, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "from a thread");
    ferromcp_string_free(result);
    /* (The thread may answer before the link records that it started it.) */
    wait_for(&later_started, 0);
    if (atomic_load(&later_started)) pthread_join(later_thread, NULL);

    /* The caller's cancel handle ends a link's own wait: the link sees its
     * call cancelled, its next ends, its answer is discarded. */
    atomic_store(&cancelled_seen, 0);
    atomic_store(&cancelled_next_status, -1);
    atomic_store(&cancelled_respond_status, -1);
    ferromcp_cancel_handle *cancel = NULL;
    CHECK_STATUS(ferromcp_cancel_handle_new(&cancel), FERROMCP_OK);
    pthread_t firer;
    CHECK(pthread_create(&firer, NULL, fire_later, cancel) == 0);
    CHECK_STATUS(
        ferromcp_client_call_tool(client, "hang", "{}", 0, NULL, NULL, cancel, &result),
        FERROMCP_REQUEST_CANCELLED);
    pthread_join(firer, NULL);
    ferromcp_cancel_handle_free(cancel);
    wait_for(&cancelled_respond_status, -1);
    CHECK(atomic_load(&cancelled_seen) == 1);
    CHECK(atomic_load(&cancelled_next_status) == FERROMCP_REQUEST_CANCELLED);
    CHECK(atomic_load(&cancelled_respond_status) == FERROMCP_REQUEST_CANCELLED);

    /* The client goes on working, with calls through the chain at once. */
    pthread_t callers[4];
    for (int i = 0; i < 4; i++) {
        CHECK(pthread_create(&callers[i], NULL, echo_at_once, client) == 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(callers[i], NULL);

    /* Each finalizer runs once, when the client is gone. */
    ferromcp_client_free(client);
    for (int i = 0; i < 500 && (atomic_load(&outer_data.finalized) == 0 ||
                                atomic_load(&inner_data.finalized) == 0);
         i++) {
        sleep_ms(10);
    }
    CHECK(atomic_load(&outer_data.finalized) == 1);
    CHECK(atomic_load(&inner_data.finalized) == 1);
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

int main(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("client-mw", "1.0.0", &server), FERROMCP_OK);
    if (server == NULL) return check_report("test_client_middleware");
    add_tool(server, "echo", echo);
    add_tool(server, "fail", fail);
    add_tool(server, "slow", slow);
    CHECK_STATUS(ferromcp_server_add_middleware(server, server_link, NULL, NULL), FERROMCP_OK);

    test_arguments(server);
    test_chain(server, 0, "modern", "2026-07-28");
    test_chain(server, 0, "legacy", "2025-11-25");

    struct serve_job job = {server, FERROMCP_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve, &job) == 0);
    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(port != 0);
    if (port != 0) {
        test_chain(server, port, "modern", "2026-07-28");
        test_chain(server, port, "legacy", "2025-11-25");
    }
    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    pthread_join(thread, NULL);
    CHECK_STATUS(job.status, FERROMCP_OK);
    ferromcp_server_free(server);
    return check_report("test_client_middleware");
}
