/* Notification middleware from C (ferromcp_server_add_notification_middleware(),
 * ferromcp_client_add_notification_middleware()).
 *
 * Server side: two links, in the order added, see notifications/initialized
 * from a 2025-11-25 client (in memory and over HTTP); in memory, a link
 * that stops notifications/cancelled keeps a slow tool running to its end
 * after the client cancelled (the next link never sees it), while without
 * the stop the tool sees the cancellation; request links and the notification
 * links share one chain (requests pass a notification link unchanged).
 *
 * Client side (both eras, in memory and over HTTP): a link stops one
 * progress update, changes another's message (ferromcp_string_new()), and
 * gives bad replacement JSON for a third and a non-object for a fourth,
 * which reach the progress callback unchanged; the next link sees what
 * the first passed on. Every finalizer runs once. Run from the repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

/* ---- a log the callbacks write ---- */

struct text_log {
    pthread_mutex_t lock;
    char text[8192];
};

static struct text_log server_log = {PTHREAD_MUTEX_INITIALIZER, ""};
static struct text_log client_log = {PTHREAD_MUTEX_INITIALIZER, ""};
static struct text_log progress_log = {PTHREAD_MUTEX_INITIALIZER, ""};

static void log_add(struct text_log *log, const char *a, const char *b) {
    pthread_mutex_lock(&log->lock);
    size_t used = strlen(log->text);
    snprintf(log->text + used, sizeof log->text - used, "%s%s|", a, b);
    pthread_mutex_unlock(&log->lock);
}

static void log_clear(struct text_log *log) {
    pthread_mutex_lock(&log->lock);
    log->text[0] = '\0';
    pthread_mutex_unlock(&log->lock);
}

static bool log_has(struct text_log *log, const char *needle) {
    pthread_mutex_lock(&log->lock);
    bool found = strstr(log->text, needle) != NULL;
    pthread_mutex_unlock(&log->lock);
    return found;
}

static bool log_is(struct text_log *log, const char *expected) {
    pthread_mutex_lock(&log->lock);
    bool same = strcmp(log->text, expected) == 0;
    if (!same) fprintf(stderr, "log: %s\nexpected: %s\n", log->text, expected);
    pthread_mutex_unlock(&log->lock);
    return same;
}

static void wait_for_log(struct text_log *log, const char *needle) {
    for (int i = 0; i < 500 && !log_has(log, needle); i++) sleep_ms(10);
}

/* ---- the server ---- */

/* How the latest slow call ended: 0 running, 1 cancelled, 2 finished. */
static atomic_int slow_outcome = 0;

/* Runs 600 ms unless its request is cancelled first. */
static void slow(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    for (int i = 0; i < 60; i++) {
        if (ferromcp_call_is_cancelled(call)) {
            atomic_store(&slow_outcome, 1);
            ferromcp_call_respond(call, "\"cancelled\"");
            return;
        }
        sleep_ms(10);
    }
    atomic_store(&slow_outcome, 2);
    ferromcp_call_respond(call, "\"finished\"");
}

/* Reports progress four times, then answers. */
static void steps(void *userdata, const char *arguments_json, size_t arguments_len,
                  ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    const ferromcp_context *context = ferromcp_call_context(call);
    const char *messages[] = {"one", "two", "three", "four"};
    for (int i = 0; i < 4; i++) {
        bool sent = false;
        CHECK_STATUS(ferromcp_context_progress(context, i + 1, 4, messages[i], &sent),
                     FERROMCP_OK);
        CHECK(sent);
    }
    ferromcp_call_respond(call, "\"done\"");
}

static void add_tool(ferromcp_server *server, const char *name, ferromcp_tool_callback callback) {
    CHECK_STATUS(ferromcp_server_add_tool(server, name, NULL, "{\"type\":\"object\"}", NULL,
                                         callback, NULL, NULL),
                 FERROMCP_OK);
}

/* Whether the first server link stops notifications/cancelled. */
static atomic_bool stop_cancel = false;

static atomic_int finalized = 0;

static void count_finalizer(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&finalized, 1);
}

/* The first server link: logs "a:<method>" and stops a cancellation when
 * told to. */
static bool server_first(void *userdata, const char *method, const char *params_json,
                         char **replaced_params_json) {
    (void)userdata;
    CHECK(params_json != NULL && params_json[0] == '{');
    CHECK(replaced_params_json != NULL && *replaced_params_json == NULL);
    log_add(&server_log, "a:", method);
    if (strcmp(method, "notifications/cancelled") == 0) {
        CHECK_CONTAINS(params_json, "\"requestId\"");
        return !atomic_load(&stop_cancel);
    }
    return true;
}

/* The second: logs "b:<method>". */
static bool server_second(void *userdata, const char *method, const char *params_json,
                          char **replaced_params_json) {
    (void)userdata;
    (void)params_json;
    (void)replaced_params_json;
    log_add(&server_log, "b:", method);
    return true;
}

/* A request link between them: the notification links pass requests on,
 * and it passes notifications on. */
static atomic_int requests_seen = 0;

static void request_link(void *userdata, const ferromcp_middleware_request *request,
                         ferromcp_next *next, ferromcp_call *call) {
    (void)userdata;
    (void)request;
    atomic_fetch_add(&requests_seen, 1);
    char *result = NULL;
    ferromcp_status status = ferromcp_next_run(next, NULL, &result);
    if (status == FERROMCP_OK) {
        ferromcp_call_respond(call, result);
    } else if (status == FERROMCP_PEER_ERROR) {
        ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(), ferromcp_last_error_message(),
                                   ferromcp_last_error_data_json());
    } else {
        ferromcp_call_fail(call, ferromcp_last_error_message());
    }
    ferromcp_string_free(result);
}

/* ---- the client's links ---- */

/* Stops "two", upper-cases "one", gives bad JSON for "three" and a
 * non-object for "four". */
static bool client_first(void *userdata, const char *method, const char *params_json,
                         char **replaced_params_json) {
    (void)userdata;
    CHECK(replaced_params_json != NULL && *replaced_params_json == NULL);
    if (strcmp(method, "notifications/progress") != 0) return true;
    char *message = NULL;
    if (ferromcp_json_get(params_json, "/message", &message) != FERROMCP_OK) return true;
    log_add(&client_log, "first:", message);
    bool go_on = true;
    if (strcmp(message, "one") == 0) {
        char *token = NULL;
        CHECK_STATUS(ferromcp_json_get_json(params_json, "/progressToken", &token), FERROMCP_OK);
        char text[256];
        snprintf(text, sizeof text, "{\"progressToken\":%s,\"progress\":1,\"total\":4,"
                 "\"message\":\"ONE\"}", token != NULL ? token : "0");
        CHECK_STATUS(ferromcp_string_new(text, replaced_params_json), FERROMCP_OK);
        ferromcp_string_free(token);
    } else if (strcmp(message, "two") == 0) {
        /* Stopped; the replacement is freed all the same. */
        CHECK_STATUS(ferromcp_string_new("{\"ignored\":true}", replaced_params_json),
                     FERROMCP_OK);
        go_on = false;
    } else if (strcmp(message, "three") == 0) {
        CHECK_STATUS(ferromcp_string_new("{not json", replaced_params_json), FERROMCP_OK);
    } else if (strcmp(message, "four") == 0) {
        CHECK_STATUS(ferromcp_string_new("[1,2]", replaced_params_json), FERROMCP_OK);
    }
    ferromcp_string_free(message);
    return go_on;
}

static bool client_second(void *userdata, const char *method, const char *params_json,
                          char **replaced_params_json) {
    (void)userdata;
    (void)replaced_params_json;
    if (strcmp(method, "notifications/progress") != 0) return true;
    char *message = NULL;
    if (ferromcp_json_get(params_json, "/message", &message) == FERROMCP_OK) {
        log_add(&client_log, "second:", message);
        ferromcp_string_free(message);
    }
    return true;
}

/* Warnings about dropped replacements, through the log callback. */
static atomic_int dropped_warnings = 0;

static void on_log(void *userdata, ferromcp_log_level level, const char *target,
                   const char *message) {
    (void)userdata;
    (void)target;
    if (level == FERROMCP_LOG_WARN && strstr(message, "not a JSON object") != NULL &&
        strstr(message, "notifications/progress") != NULL) {
        atomic_fetch_add(&dropped_warnings, 1);
    }
}

static void on_progress(void *userdata, double progress, double total, const char *message) {
    (void)userdata;
    (void)progress;
    CHECK(total == 4);
    log_add(&progress_log, message != NULL ? message : "(none)", "");
}

/* ---- helpers ---- */

static ferromcp_client *connect(ferromcp_server *server, uint16_t port, const char *era) {
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
    return client;
}

static void *fire_later(void *arg) {
    sleep_ms(150);
    ferromcp_cancel_handle_cancel(arg);
    return NULL;
}

/* Calls the slow tool and cancels it after 150 ms; returns how it ended on
 * the server. */
static int cancelled_slow_call(ferromcp_client *client) {
    atomic_store(&slow_outcome, 0);
    ferromcp_cancel_handle *cancel = NULL;
    CHECK_STATUS(ferromcp_cancel_handle_new(&cancel), FERROMCP_OK);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, fire_later, cancel) == 0);
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "slow", "{}", 5000, NULL, NULL, cancel, &result),
                 FERROMCP_REQUEST_CANCELLED);
    CHECK(result == NULL);
    pthread_join(thread, NULL);
    ferromcp_cancel_handle_free(cancel);
    for (int i = 0; i < 300 && atomic_load(&slow_outcome) == 0; i++) sleep_ms(10);
    return atomic_load(&slow_outcome);
}

/* ---- the tests ---- */

static void test_arguments(ferromcp_server *server) {
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, NULL, &client), FERROMCP_OK);
    int flag = 0;
    CHECK_STATUS(ferromcp_server_add_notification_middleware(NULL, server_first, &flag,
                                                             count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_notification_middleware(server, NULL, &flag, count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_client_add_notification_middleware(NULL, client_first, &flag,
                                                             count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_client_add_notification_middleware(client, NULL, &flag, count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    char *copy = NULL;
    CHECK_STATUS(ferromcp_string_new(NULL, &copy), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_string_new("x", NULL), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_string_new("\xff", &copy), FERROMCP_INVALID_UTF8);
    CHECK(copy == NULL);
    CHECK_STATUS(ferromcp_string_new("{\"a\":\"\xc3\xa9\"}", &copy), FERROMCP_OK);
    CHECK(copy != NULL && strcmp(copy, "{\"a\":\"\xc3\xa9\"}") == 0);
    ferromcp_string_free(copy);
    ferromcp_client_free(client);
    CHECK(atomic_load(&finalized) == 0);
}

/* A 2025-11-25 client: the links see notifications/initialized, and the
 * first link's stop keeps a cancelled tool running. */
static void test_server_side(ferromcp_server *server, uint16_t port) {
    fprintf(stderr, "server notification middleware: %s\n", port != 0 ? "HTTP" : "in memory");
    log_clear(&server_log);
    atomic_store(&stop_cancel, false);
    int requests_before = atomic_load(&requests_seen);
    ferromcp_client *client = connect(server, port, "legacy");
    if (client == NULL) return;
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &result), FERROMCP_OK);
    ferromcp_string_free(result);
    char *version = NULL;
    CHECK_STATUS(ferromcp_client_protocol_version(client, &version), FERROMCP_OK);
    CHECK(version != NULL && strcmp(version, "2025-11-25") == 0);
    ferromcp_string_free(version);
    wait_for_log(&server_log, "b:notifications/initialized");
    CHECK(log_is(&server_log, "a:notifications/initialized|b:notifications/initialized|"));
    /* Requests went through the request link between the two. */
    CHECK(atomic_load(&requests_seen) > requests_before);

    /* Over HTTP a 2025-11-25 client cancels by closing the request's
     * stream, which no link sees; in memory (as over stdio) it sends
     * notifications/cancelled. */
    if (port != 0) {
        ferromcp_client_free(client);
        return;
    }

    /* Without the stop the cancellation reaches the tool. */
    log_clear(&server_log);
    CHECK(cancelled_slow_call(client) == 1);
    wait_for_log(&server_log, "b:notifications/cancelled");
    CHECK(log_is(&server_log, "a:notifications/cancelled|b:notifications/cancelled|"));

    /* With it the tool runs to its end, and the second link sees nothing. */
    log_clear(&server_log);
    atomic_store(&stop_cancel, true);
    CHECK(cancelled_slow_call(client) == 2);
    CHECK(log_is(&server_log, "a:notifications/cancelled|"));
    atomic_store(&stop_cancel, false);
    ferromcp_client_free(client);
}

/* Progress through the client's two links, in one era. */
static void test_client_side(ferromcp_server *server, uint16_t port, const char *era) {
    fprintf(stderr, "client notification middleware: %s, %s\n",
            port != 0 ? "HTTP" : "in memory", era);
    ferromcp_client *client = connect(server, port, era);
    if (client == NULL) return;
    int before = atomic_load(&finalized);
    CHECK_STATUS(ferromcp_client_add_notification_middleware(client, client_first, NULL,
                                                             count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_client_add_notification_middleware(client, client_second, NULL,
                                                             count_finalizer),
                 FERROMCP_OK);
    log_clear(&client_log);
    log_clear(&progress_log);
    atomic_store(&dropped_warnings, 0);
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "steps", "{}", 5000, on_progress, NULL, NULL,
                                           &result),
                 FERROMCP_OK);
    CHECK_CONTAINS(result, "done");
    ferromcp_string_free(result);
    /* "two" stopped by the first link; "one" changed; "three" and "four"
     * unchanged (their replacements were no JSON object). */
    CHECK(log_is(&progress_log, "ONE|three|four|"));
    CHECK(log_is(&client_log, "first:one|second:ONE|first:two|first:three|second:three|"
                              "first:four|second:four|"));
    /* "three" and "four" were reported. */
    CHECK(atomic_load(&dropped_warnings) == 2);
    ferromcp_client_free(client);
    /* Both links' userdata are released with the client. */
    for (int i = 0; i < 200 && atomic_load(&finalized) < before + 2; i++) sleep_ms(10);
    CHECK(atomic_load(&finalized) == before + 2);
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
    CHECK_STATUS(ferromcp_server_new("notification-mw", "1.0.0", &server), FERROMCP_OK);
    if (server == NULL) return check_report("test_notification_middleware");
    add_tool(server, "slow", slow);
    add_tool(server, "steps", steps);

    CHECK_STATUS(ferromcp_set_log_callback(on_log, NULL, FERROMCP_LOG_WARN), FERROMCP_OK);
    test_arguments(server);
    CHECK_STATUS(ferromcp_server_add_notification_middleware(server, server_first, NULL,
                                                             count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_middleware(server, request_link, NULL, NULL), FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_notification_middleware(server, server_second, NULL,
                                                             count_finalizer),
                 FERROMCP_OK);

    test_server_side(server, 0);
    test_client_side(server, 0, "modern");
    test_client_side(server, 0, "legacy");

    struct serve_job job = {server, FERROMCP_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve, &job) == 0);
    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(port != 0);
    if (port != 0) {
        test_server_side(server, port);
        test_client_side(server, port, "modern");
        test_client_side(server, port, "legacy");
    }
    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    pthread_join(thread, NULL);
    CHECK_STATUS(job.status, FERROMCP_OK);
    int before = atomic_load(&finalized);
    ferromcp_server_free(server);
    /* The server's two notification links' userdata. */
    for (int i = 0; i < 200 && atomic_load(&finalized) < before + 2; i++) sleep_ms(10);
    CHECK(atomic_load(&finalized) == before + 2);
    CHECK_STATUS(ferromcp_set_log_callback(NULL, NULL, FERROMCP_LOG_OFF), FERROMCP_OK);
    return check_report("test_notification_middleware");
}
