/* Server middleware from C (ferromcp_server_add_middleware(),
 * ferromcp_server_add_builtin_middleware()), driven by in-memory clients:
 * links run in the order added and may change params and results; a link
 * that does not call next short-circuits; an error from the rest of the
 * chain reaches the link and passes on unchanged; a cancelled request ends
 * the link's wait in ferromcp_next_run() and a call never answered waits
 * until then; the ready-made rate limit refuses past its budget, per
 * client; error masking hides an internal message; every finalizer runs
 * once. Run from the repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

/* ---- the request log the links write ---- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[8192];

static void log_add(const char *what, const char *method) {
    pthread_mutex_lock(&log_lock);
    size_t used = strlen(log_text);
    snprintf(log_text + used, sizeof log_text - used, "%s %s|", what,
             method != NULL ? method : "(null)");
    pthread_mutex_unlock(&log_lock);
}

static void log_clear(void) {
    pthread_mutex_lock(&log_lock);
    log_text[0] = '\0';
    pthread_mutex_unlock(&log_lock);
}

/* Whether the log ends with `tail`. */
static bool log_ends_with(const char *tail) {
    pthread_mutex_lock(&log_lock);
    size_t used = strlen(log_text), len = strlen(tail);
    bool ends = used >= len && strcmp(log_text + used - len, tail) == 0;
    if (!ends) fprintf(stderr, "log: %s\n", log_text);
    pthread_mutex_unlock(&log_lock);
    return ends;
}

static bool log_contains(const char *needle) {
    pthread_mutex_lock(&log_lock);
    bool found = strstr(log_text, needle) != NULL;
    if (!found) fprintf(stderr, "log: %s\n", log_text);
    pthread_mutex_unlock(&log_lock);
    return found;
}

/* ---- finalizers ---- */

static atomic_int outer_finalized = 0;
static atomic_int inner_finalized = 0;
static atomic_int masked_link_finalized = 0;
static atomic_int tools_finalized = 0;

static void count_finalizer(void *userdata) { atomic_fetch_add((atomic_int *)userdata, 1); }

/* ---- tools ---- */

static atomic_int echo_calls = 0;

static void echo(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_len;
    atomic_fetch_add(&echo_calls, 1);
    char *text = NULL;
    ferromcp_json_get(arguments_json, "/text", &text);
    char answer[256];
    snprintf(answer, sizeof answer, "\"echo: %s\"", text != NULL ? text : "");
    ferromcp_string_free(text);
    CHECK_STATUS(ferromcp_call_respond(call, answer), FERROMCP_OK);
}

/* Waits until its request is cancelled (at most 20 s), then completes. */
static void slow(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    for (int i = 0; i < 2000 && !ferromcp_call_is_cancelled(call); i++) sleep_ms(10);
    CHECK(ferromcp_call_is_cancelled(call));
    ferromcp_call_respond(call, "\"too late\"");
}

static void broken(void *userdata, const char *arguments_json, size_t arguments_len,
                   ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_fail_jsonrpc(call, -32603, "db password is hunter2", NULL),
                 FERROMCP_OK);
}

static void tool_error(void *userdata, const char *arguments_json, size_t arguments_len,
                       ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_fail(call, "a message for the model"), FERROMCP_OK);
}

static void add_tool(ferromcp_server *server, const char *name, ferromcp_tool_callback callback) {
    CHECK_STATUS(ferromcp_server_add_tool(
                     server, name, NULL,
                     "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}", NULL,
                     callback, &tools_finalized, count_finalizer),
                 FERROMCP_OK);
}

/* ---- links ---- */

/* What the outer link saw, for the main thread to check. */
static atomic_int next_error_code = 0;
static atomic_int slow_next_status = -1;
static atomic_int slow_respond_status = -1;
static atomic_int second_run_status = -1;
static atomic_int bad_params_status = -1;
static _Atomic(ferromcp_call *) stashed_call = NULL;

/* Answers `call` with what ferromcp_next_run() returned. */
static void pass_on(ferromcp_status status, char *result, ferromcp_call *call) {
    if (status == FERROMCP_OK) {
        /* (Cancelled: a request the client gave up on, answered late.) */
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

static void outer(void *userdata, const ferromcp_middleware_request *request, ferromcp_next *next,
                  ferromcp_call *call) {
    CHECK(userdata == (void *)&outer_finalized);
    const char *method = ferromcp_middleware_request_method(request);
    const char *name = ferromcp_middleware_request_name(request);
    const char *params = ferromcp_middleware_request_params_json(request);
    const char *meta = ferromcp_middleware_request_meta_json(request);
    CHECK(method != NULL && params != NULL && meta != NULL);
    CHECK(ferromcp_call_context(call) == NULL);
    log_add("outer", method);
    /* Who asks: the client's identity and protocol version; no HTTP here. */
    CHECK_CONTAINS(meta, "\"clientInfo\":{\"name\":\"mw-client\"");
    CHECK_CONTAINS(meta, "\"protocolVersion\":\"");
    CHECK_CONTAINS(meta, "\"auth\":null");
    char *header = NULL;
    CHECK_STATUS(ferromcp_middleware_request_http_header(request, "host", &header),
                 FERROMCP_NOT_FOUND);

    char *text = NULL;
    ferromcp_json_get(params, "/arguments/text", &text);
    bool forbidden = text != NULL && strcmp(text, "forbidden") == 0;
    ferromcp_string_free(text);
    if (forbidden) {
        /* Short-circuit: the rest of the chain never runs. */
        CHECK_STATUS(ferromcp_call_fail_jsonrpc(call, -32602, "refused by policy",
                                                "{\"policy\":\"no-forbidden\"}"),
                     FERROMCP_OK);
        return;
    }
    if (name != NULL && strcmp(name, "hang") == 0) {
        /* Never answered here: the request waits until it is cancelled. */
        atomic_store(&stashed_call, call);
        return;
    }

    char *result = NULL;
    if (name != NULL && strcmp(name, "echo") == 0) {
        CHECK(strcmp(method, "tools/call") == 0);
        CHECK_CONTAINS(params, "\"arguments\":{\"text\":\"hi\"}");
        /* Params that are not an object are refused, and next stays usable. */
        atomic_store(&bad_params_status, ferromcp_next_run(next, "[1]", &result));
        /* Changed on the way in... */
        ferromcp_status status = ferromcp_next_run(
            next, "{\"name\":\"echo\",\"arguments\":{\"text\":\"changed on the way in\"}}",
            &result);
        CHECK_STATUS(status, FERROMCP_OK);
        if (status != FERROMCP_OK) {
            pass_on(status, NULL, call);
            return;
        }
        /* At most once. */
        char *again = NULL;
        atomic_store(&second_run_status, ferromcp_next_run(next, NULL, &again));
        CHECK(again == NULL);
        /* ...and on the way out: a _meta member of the link's own. */
        CHECK(result[0] == '{');
        CHECK(strstr(result, "\"_meta\"") == NULL);
        size_t len = strlen(result) + 64;
        char *changed = malloc(len);
        snprintf(changed, len, "{\"_meta\":{\"example.com/seen\":true},%s", result + 1);
        ferromcp_string_free(result);
        /* Logged before answering: the client may check the log as soon as
         * the answer reaches it. */
        log_add("outer done", method);
        CHECK_STATUS(ferromcp_call_respond(call, changed), FERROMCP_OK);
        free(changed);
        return;
    }

    ferromcp_status status = ferromcp_next_run(next, NULL, &result);
    if (name != NULL && strcmp(name, "nope") == 0) {
        CHECK_STATUS(status, FERROMCP_PEER_ERROR);
        atomic_store(&next_error_code, ferromcp_last_error_code());
    }
    if (name != NULL && strcmp(name, "slow") == 0) {
        /* The client gave up: the wait ends, the answer is discarded. */
        atomic_store(&slow_next_status, status);
        CHECK(ferromcp_call_is_cancelled(call));
        atomic_store(&slow_respond_status, ferromcp_call_respond(call, "{}"));
        ferromcp_string_free(result);
        return;
    }
    pass_on(status, result, call);
}

static void inner(void *userdata, const ferromcp_middleware_request *request, ferromcp_next *next,
                  ferromcp_call *call) {
    CHECK(userdata == (void *)&inner_finalized);
    log_add("inner", ferromcp_middleware_request_method(request));
    char *result = NULL;
    ferromcp_status status = ferromcp_next_run(next, NULL, &result);
    pass_on(status, result, call);
}

/* After maskErrors: fails its own way for the tools named below. */
static atomic_int bad_shape_status = -1;

static void failing_link(void *userdata, const ferromcp_middleware_request *request,
                         ferromcp_next *next, ferromcp_call *call) {
    (void)userdata;
    const char *name = ferromcp_middleware_request_name(request);
    if (name != NULL && strcmp(name, "linkfail") == 0) {
        /* An internal error (-32603) with the link's message. */
        CHECK_STATUS(ferromcp_call_fail(call, "link secret"), FERROMCP_OK);
        return;
    }
    if (name != NULL && strcmp(name, "badshape") == 0) {
        /* Not a result object: the request fails with an internal error. */
        atomic_store(&bad_shape_status, ferromcp_call_respond(call, "[1]"));
        return;
    }
    char *result = NULL;
    ferromcp_status status = ferromcp_next_run(next, NULL, &result);
    pass_on(status, result, call);
}

/* ---- helpers ---- */

static ferromcp_client *connect_as(ferromcp_server *server, const char *name) {
    char options_json[128];
    snprintf(options_json, sizeof options_json, "{\"name\":\"%s\",\"version\":\"1.0.0\"}", name);
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new(options_json, &options), FERROMCP_OK);
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, options, &client), FERROMCP_OK);
    ferromcp_client_options_free(options);
    return client;
}

static ferromcp_status call_tool(ferromcp_client *client, const char *name, const char *arguments,
                                 uint64_t timeout_ms, char **out_result) {
    *out_result = NULL;
    return ferromcp_client_call_tool(client, name, arguments, timeout_ms, NULL, NULL, NULL,
                                     out_result);
}

static void wait_for(atomic_int *value, int unset) {
    for (int i = 0; i < 1000 && atomic_load(value) == unset; i++) sleep_ms(10);
}

/* ---- the tests ---- */

static void test_arguments(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("args", "1.0.0", &server), FERROMCP_OK);
    int kept = 0;
    CHECK_STATUS(ferromcp_server_add_middleware(NULL, inner, NULL, NULL), FERROMCP_NULL_ARGUMENT);
    /* A NULL callback: the userdata stays the caller's (no finalizer). */
    CHECK_STATUS(ferromcp_server_add_middleware(server, NULL, &kept, count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "nope", NULL),
                 FERROMCP_INVALID_ARGUMENT);
    CHECK_CONTAINS(ferromcp_last_error_message(), "rateLimit");
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, NULL, NULL),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(NULL, "maskErrors", NULL),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "rateLimit", NULL),
                 FERROMCP_INVALID_JSON);
    CHECK_CONTAINS(ferromcp_last_error_message(), "perSecond");
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "rateLimit",
                                                        "{\"perSecond\":1,\"burst\":0}"),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(
                     server, "rateLimit", "{\"perSecond\":1,\"burst\":2,\"per_second\":1}"),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "logRequests", "{\"level\":1}"),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "maskErrors", "[]"),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "logRequests", NULL), FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(
                     server, "rateLimit", "{\"perSecond\":5,\"burst\":10,\"maxClients\":100}"),
                 FERROMCP_OK);
    char *result = NULL;
    CHECK_STATUS(ferromcp_next_run(NULL, NULL, &result), FERROMCP_NULL_ARGUMENT);
    CHECK(ferromcp_middleware_request_method(NULL) == NULL);
    CHECK(ferromcp_middleware_request_name(NULL) == NULL);
    CHECK(ferromcp_middleware_request_params_json(NULL) == NULL);
    CHECK(ferromcp_middleware_request_meta_json(NULL) == NULL);
    ferromcp_server_free(server);
    CHECK(kept == 0);
}

static void test_chain(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("chain", "1.0.0", &server), FERROMCP_OK);
    add_tool(server, "echo", echo);
    add_tool(server, "slow", slow);
    CHECK_STATUS(ferromcp_server_add_middleware(server, outer, &outer_finalized, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_middleware(server, inner, &inner_finalized, count_finalizer),
                 FERROMCP_OK);
    ferromcp_client *client = connect_as(server, "mw-client");

    /* Order, and params and result changed by the outer link. */
    log_clear();
    char *result = NULL;
    CHECK_STATUS(call_tool(client, "echo", "{\"text\":\"hi\"}", 20000, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "echo: changed on the way in");
    CHECK_CONTAINS(result, "\"example.com/seen\":true");
    ferromcp_string_free(result);
    CHECK(log_ends_with("outer tools/call|inner tools/call|outer done tools/call|"));
    CHECK(atomic_load(&bad_params_status) == FERROMCP_INVALID_JSON);
    CHECK(atomic_load(&second_run_status) == FERROMCP_INVALID_STATE);

    /* Lists go through the chain too. */
    log_clear();
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "\"echo\"");
    ferromcp_string_free(result);
    CHECK(log_contains("outer tools/list|inner tools/list|"));

    /* Short-circuit: refused before the tool (or the inner link) runs. */
    int calls_before = atomic_load(&echo_calls);
    log_clear();
    CHECK_STATUS(call_tool(client, "echo", "{\"text\":\"forbidden\"}", 20000, &result),
                 FERROMCP_PEER_ERROR);
    CHECK(ferromcp_last_error_code() == -32602);
    CHECK_CONTAINS(ferromcp_last_error_message(), "refused by policy");
    CHECK_CONTAINS(ferromcp_last_error_data_json(), "no-forbidden");
    ferromcp_string_free(result);
    CHECK(atomic_load(&echo_calls) == calls_before);
    CHECK(log_ends_with("outer tools/call|"));

    /* The rest of the chain's error reaches the link and passes on as is. */
    CHECK_STATUS(call_tool(client, "nope", "{}", 20000, &result), FERROMCP_PEER_ERROR);
    int client_code = ferromcp_last_error_code();
    ferromcp_string_free(result);
    CHECK(client_code != 0 && atomic_load(&next_error_code) == client_code);

    /* A request the client gives up on ends the link's wait in next. */
    CHECK_STATUS(call_tool(client, "slow", "{}", 1000, &result), FERROMCP_TIMEOUT);
    ferromcp_string_free(result);
    wait_for(&slow_respond_status, -1);
    CHECK(atomic_load(&slow_next_status) == FERROMCP_REQUEST_CANCELLED);
    CHECK(atomic_load(&slow_respond_status) == FERROMCP_REQUEST_CANCELLED);

    /* A call the link never answers: the request waits until cancelled. */
    CHECK_STATUS(call_tool(client, "hang", "{}", 1000, &result), FERROMCP_TIMEOUT);
    ferromcp_string_free(result);
    for (int i = 0; i < 1000 && atomic_load(&stashed_call) == NULL; i++) sleep_ms(10);
    ferromcp_call *hung = atomic_load(&stashed_call);
    CHECK(hung != NULL);
    if (hung != NULL) {
        for (int i = 0; i < 1000 && !ferromcp_call_is_cancelled(hung); i++) sleep_ms(10);
        CHECK(ferromcp_call_is_cancelled(hung));
        CHECK_STATUS(ferromcp_call_respond(hung, "{}"), FERROMCP_REQUEST_CANCELLED);
    }

    /* The connection goes on serving. */
    CHECK_STATUS(call_tool(client, "echo", "{\"text\":\"hi\"}", 20000, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "echo: changed on the way in");
    ferromcp_string_free(result);

    ferromcp_client_free(client);
    ferromcp_server_free(server);
}

static void test_rate_limit(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("limited", "1.0.0", &server), FERROMCP_OK);
    add_tool(server, "echo", echo);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "rateLimit",
                                                        "{\"perSecond\":0.001,\"burst\":3}"),
                 FERROMCP_OK);
    ferromcp_client *client = connect_as(server, "greedy");
    /* A budget of 3 (the client's own discovery and lists count too). */
    int answered = 0, refused = 0;
    for (int i = 0; i < 8; i++) {
        char *result = NULL;
        ferromcp_status status = call_tool(client, "echo", "{\"text\":\"x\"}", 20000, &result);
        if (status == FERROMCP_OK) {
            CHECK(refused == 0); /* never answered after a refusal */
            answered++;
        } else {
            CHECK_STATUS(status, FERROMCP_PEER_ERROR);
            CHECK(ferromcp_last_error_code() == -32000);
            CHECK_CONTAINS(ferromcp_last_error_message(), "Too many requests");
            CHECK_CONTAINS(ferromcp_last_error_data_json(), "retryAfterMs");
            refused++;
        }
        ferromcp_string_free(result);
    }
    CHECK(answered >= 1 && answered <= 3);
    CHECK(answered + refused == 8);
    /* Another client (another clientInfo) has a budget of its own. */
    ferromcp_client *other = connect_as(server, "polite");
    char *result = NULL;
    CHECK_STATUS(call_tool(other, "echo", "{\"text\":\"mine\"}", 20000, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "echo: mine");
    ferromcp_string_free(result);
    ferromcp_client_free(other);
    ferromcp_client_free(client);
    ferromcp_server_free(server);
}

static void test_mask_errors(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("masked", "1.0.0", &server), FERROMCP_OK);
    add_tool(server, "broken", broken);
    add_tool(server, "tool_error", tool_error);
    add_tool(server, "echo", echo);
    CHECK_STATUS(ferromcp_server_add_builtin_middleware(server, "maskErrors", "{}"), FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_middleware(server, failing_link, &masked_link_finalized,
                                                count_finalizer),
                 FERROMCP_OK);
    ferromcp_client *client = connect_as(server, "curious");
    char *result = NULL;
    /* A tool's internal error: masked. */
    CHECK_STATUS(call_tool(client, "broken", "{}", 20000, &result), FERROMCP_PEER_ERROR);
    CHECK(ferromcp_last_error_code() == -32603);
    CHECK(strstr(ferromcp_last_error_message(), "hunter2") == NULL);
    CHECK_CONTAINS(ferromcp_last_error_message(), "Internal error");
    ferromcp_string_free(result);
    /* A link's ferromcp_call_fail() is an internal error: masked too. */
    CHECK_STATUS(call_tool(client, "linkfail", "{}", 20000, &result), FERROMCP_PEER_ERROR);
    CHECK(ferromcp_last_error_code() == -32603);
    CHECK(strstr(ferromcp_last_error_message(), "link secret") == NULL);
    ferromcp_string_free(result);
    /* An answer that is not a result object fails the request. */
    CHECK_STATUS(call_tool(client, "badshape", "{}", 20000, &result), FERROMCP_PEER_ERROR);
    CHECK(ferromcp_last_error_code() == -32603);
    ferromcp_string_free(result);
    /* Stored once ferromcp_call_respond() returns, which may be after the
     * client has its answer. */
    wait_for(&bad_shape_status, -1);
    CHECK(atomic_load(&bad_shape_status) == FERROMCP_INVALID_JSON);
    /* A tool result flagged isError is for the model: it passes. */
    CHECK_STATUS(call_tool(client, "tool_error", "{}", 20000, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "\"isError\":true");
    CHECK_CONTAINS(result, "a message for the model");
    ferromcp_string_free(result);
    CHECK_STATUS(call_tool(client, "echo", "{\"text\":\"fine\"}", 20000, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "echo: fine");
    ferromcp_string_free(result);
    ferromcp_client_free(client);
    ferromcp_server_free(server);
}

int main(void) {
    test_arguments();
    test_chain();
    test_rate_limit();
    test_mask_errors();
    /* Each finalizer once, after client and server are freed. */
    for (int i = 0; i < 500 && (atomic_load(&outer_finalized) < 1 ||
                                atomic_load(&inner_finalized) < 1 ||
                                atomic_load(&masked_link_finalized) < 1 ||
                                atomic_load(&tools_finalized) < 6);
         i++) {
        sleep_ms(20);
    }
    sleep_ms(50);
    CHECK(atomic_load(&outer_finalized) == 1);
    CHECK(atomic_load(&inner_finalized) == 1);
    CHECK(atomic_load(&masked_link_finalized) == 1);
    CHECK(atomic_load(&tools_finalized) == 6);
    return check_report("test_middleware");
}
