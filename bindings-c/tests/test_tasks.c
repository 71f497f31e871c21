/* Issue 28's behaviour tests for C, end to end over Streamable HTTP: a C
 * server (tools registered with the FERROMCP_TOOL_TASK_* flags, a skills
 * directory) on a free port in a thread, and the C client following its
 * tasks.
 *
 *  1. a task that runs ~3 s reporting progress: its status message
 *     ("step (k/30)") changes several times, then the result;
 *  2. a task that asks for input and resumes, answered by the client's
 *     input callback, and by the caller with ferromcp_task_respond();
 *  3. a task cancelled with ferromcp_task_cancel(), and one cancelled by a
 *     cancel handle fired during ferromcp_task_result(); the handler sees
 *     the cancellation both times;
 *  4. a finished task whose result expired (ttlMs 300, keepFinishedMs 0,
 *     then 1500: kept until max(created + ttlMs, finished +
 *     keepFinishedMs)): tasks/get answers -32602;
 *  5. a skills directory with a skill nested three levels deep, files in
 *     subfolders: listed, loaded, its files read byte for byte;
 *  6. bad input, each followed by a successful call: an unknown task id,
 *     a tampered task id, an update of a finished task (acknowledged,
 *     nothing changes), skill paths escaping the directory; on the wire,
 *     the acknowledgements' shape, malformed task requests and a client
 *     without the extension (-32021).
 *
 * Every part is independent. Run from the repository root, under valgrind. */
#define _XOPEN_SOURCE 700
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <ftw.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "http_util.h"

/* ---- helpers ---- */

static char *get(const char *json, const char *pointer) {
    char *out = NULL;
    return json != NULL && ferromcp_json_get(json, pointer, &out) == FERROMCP_OK ? out : NULL;
}

/* Whether `json` at `pointer` is the string `expected`. */
static bool is(const char *json, const char *pointer, const char *expected) {
    char *value = get(json, pointer);
    bool same = value != NULL && strcmp(value, expected) == 0;
    ferromcp_string_free(value);
    return same;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Polls the task until its status is `wanted` (10 s at most); the state
 * then, or NULL (a failed check). */
static char *wait_for_status(const ferromcp_task *task, const char *wanted) {
    for (int i = 0; i < 500; i++) {
        char *state = NULL;
        ferromcp_status status = ferromcp_task_refresh(task, &state);
        if (status != FERROMCP_OK) {
            fprintf(stderr, "wait_for_status(%s): refresh gave %s: %s\n", wanted,
                    ferromcp_status_message(status), ferromcp_last_error_message());
            check_failures++;
            return NULL;
        }
        if (is(state, "/status", wanted)) {
            return state;
        }
        ferromcp_string_free(state);
        sleep_ms(20);
    }
    fprintf(stderr, "the task never reached the status %s\n", wanted);
    check_failures++;
    return NULL;
}

/* `status` is FERROMCP_PEER_ERROR with JSON-RPC code `code`. */
#define CHECK_PEER_ERROR(expr, code)                                                           \
    do {                                                                                       \
        CHECK_STATUS((expr), FERROMCP_PEER_ERROR);                                             \
        if (ferromcp_last_error_code() != (code)) {                                            \
            fprintf(stderr, "%s:%d: %s: JSON-RPC code %d, expected %d (%s)\n", __FILE__,       \
                    __LINE__, #expr, (int)ferromcp_last_error_code(), (int)(code),             \
                    ferromcp_last_error_message());                                            \
            check_failures++;                                                                  \
        }                                                                                      \
    } while (0)

/* ---- server side: the tools ---- */

#define TOOL(fn) \
    static void fn(void *userdata, const char *args, size_t args_len, ferromcp_call *call)
#define UNUSED_TOOL_ARGS \
    (void)userdata;      \
    (void)args;          \
    (void)args_len

/* Answers at once: the "normal call" that shows the server still serves. */
TOOL(ping) {
    UNUSED_TOOL_ARGS;
    CHECK_STATUS(ferromcp_call_respond(call, "\"pong\""), FERROMCP_OK);
}

/* A task that ends at once (task-optional). */
TOOL(quick) {
    UNUSED_TOOL_ARGS;
    char *label = get(args, "/label");
    char result[128];
    snprintf(result, sizeof result, "\"quick %s\"", label != NULL ? label : "?");
    ferromcp_string_free(label);
    CHECK_STATUS(ferromcp_call_respond(call, result), FERROMCP_OK);
}

/* 30 steps of 100 ms, each reported as progress "step" k/30. */
static atomic_int long_steps_done = 0;
TOOL(long_progress) {
    UNUSED_TOOL_ARGS;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    for (int k = 1; k <= 30 && !ferromcp_context_is_cancelled(ctx); k++) {
        sleep_ms(100);
        CHECK_STATUS(ferromcp_context_progress(ctx, (double)k, 30.0, "step", NULL), FERROMCP_OK);
        atomic_store(&long_steps_done, k);
    }
    CHECK_STATUS(ferromcp_call_respond(call, "\"finished 30 steps\""), FERROMCP_OK);
}

/* Asks "Proceed?" under the key "confirm", then answers with what it got. */
static atomic_int confirm_asks = 0;
TOOL(ask_confirm) {
    UNUSED_TOOL_ARGS;
    atomic_fetch_add(&confirm_asks, 1);
    const ferromcp_context *ctx = ferromcp_call_context(call);
    CHECK_STATUS(ferromcp_context_progress(ctx, 1, 2, "about to ask", NULL), FERROMCP_OK);
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(
        ctx, "confirm", "Proceed?",
        "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}}}", &answer);
    if (status != FERROMCP_OK) {
        ferromcp_call_fail(call, ferromcp_last_error_message());
        return;
    }
    char *action = get(answer, "/action");
    char *ok = get(answer, "/content/ok");
    char result[160];
    snprintf(result, sizeof result, "\"action=%s ok=%s\"", action ? action : "-", ok ? ok : "-");
    ferromcp_string_free(action);
    ferromcp_string_free(ok);
    ferromcp_string_free(answer);
    CHECK_STATUS(ferromcp_call_respond(call, result), FERROMCP_OK);
}

/* FERROMCP_TOOL_TASK_BY_CALLBACK: asks for a name first (multi round-trip),
 * then becomes a task, works a while and greets. */
static atomic_int by_callback_started = 0;
TOOL(ask_then_task) {
    UNUSED_TOOL_ARGS;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(
        ctx, "name", "Your name?",
        "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", &answer);
    if (status != FERROMCP_OK) {
        /* FERROMCP_INPUT_REQUIRED: this round's outcome is discarded. */
        ferromcp_call_fail(call, "waiting for the client's input");
        return;
    }
    char *name = get(answer, "/content/name");
    ferromcp_string_free(answer);
    bool started = false;
    CHECK_STATUS(ferromcp_context_start_task(ctx, &started), FERROMCP_OK);
    if (started) {
        atomic_fetch_add(&by_callback_started, 1);
    }
    sleep_ms(200);
    char result[160];
    snprintf(result, sizeof result, "\"hello %s (task=%s)\"", name ? name : "?",
             started ? "yes" : "no");
    ferromcp_string_free(name);
    CHECK_STATUS(ferromcp_call_respond(call, result), FERROMCP_OK);
}

/* Works until cancelled (20 s at most); slot `args.slot` records what it saw. */
struct cancel_slot {
    atomic_int started;
    atomic_int saw_cancel;    /* ferromcp_context_is_cancelled() */
    atomic_int hook_called;   /* ferromcp_context_on_cancel() */
    atomic_int hook_freed;
    atomic_int done;
    atomic_int respond_status;
};
static struct cancel_slot cancel_slots[3];

static void on_cancel_hook(void *userdata) {
    atomic_fetch_add(&((struct cancel_slot *)userdata)->hook_called, 1);
}

static void on_cancel_hook_free(void *userdata) {
    atomic_fetch_add(&((struct cancel_slot *)userdata)->hook_freed, 1);
}

TOOL(until_cancelled) {
    UNUSED_TOOL_ARGS;
    char *slot_text = get(args, "/slot");
    int slot = slot_text != NULL ? atoi(slot_text) : 0;
    if (slot < 0 || slot > 2) {
        slot = 0;
    }
    ferromcp_string_free(slot_text);
    struct cancel_slot *seen = &cancel_slots[slot];
    const ferromcp_context *ctx = ferromcp_call_context(call);
    CHECK_STATUS(ferromcp_context_on_cancel(ctx, on_cancel_hook, seen, on_cancel_hook_free),
                 FERROMCP_OK);
    atomic_store(&seen->started, 1);
    /* The task's status message from now on. */
    CHECK_STATUS(ferromcp_context_progress(ctx, 1, 0, "started", NULL), FERROMCP_OK);
    for (int i = 0; i < 2000 && !ferromcp_context_is_cancelled(ctx); i++) {
        sleep_ms(10);
    }
    atomic_store(&seen->saw_cancel, ferromcp_context_is_cancelled(ctx) ? 1 : 0);
    atomic_store(&seen->respond_status, (int)ferromcp_call_respond(call, "\"not cancelled\""));
    atomic_store(&seen->done, 1);
}

static const char *const OBJECT_SCHEMA = "{\"type\":\"object\"}";

static void add_tools(ferromcp_server *server) {
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "ping", "answers pong", OBJECT_SCHEMA, NULL,
                                             0, ping, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "quick", "a task that ends at once",
                                             OBJECT_SCHEMA, NULL, FERROMCP_TOOL_TASK_OPTIONAL,
                                             quick, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "long_progress", "3 s with progress",
                                             OBJECT_SCHEMA, NULL, FERROMCP_TOOL_TASK_REQUIRED,
                                             long_progress, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "ask_confirm", "asks, then resumes",
                                             OBJECT_SCHEMA, NULL, FERROMCP_TOOL_TASK_OPTIONAL,
                                             ask_confirm, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(
                     server, "ask_then_task", "asks, then becomes a task", OBJECT_SCHEMA, NULL,
                     FERROMCP_TOOL_TASK_OPTIONAL | FERROMCP_TOOL_TASK_BY_CALLBACK,
                     ask_then_task, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "until_cancelled", "works until cancelled",
                                             OBJECT_SCHEMA, NULL, FERROMCP_TOOL_TASK_REQUIRED,
                                             until_cancelled, NULL, NULL),
                 FERROMCP_OK);
}

/* ---- serving in a thread ---- */

struct serving {
    ferromcp_server *server;
    pthread_t thread;
    ferromcp_status status;
    uint16_t port;
    char url[64];
};

static void *serve(void *arg) {
    struct serving *s = arg;
    s->status = ferromcp_server_serve_http_ex(s->server, "127.0.0.1", 0, NULL);
    return NULL;
}

static bool start_serving(struct serving *s) {
    s->status = FERROMCP_INTERNAL;
    if (pthread_create(&s->thread, NULL, serve, s) != 0) {
        CHECK(!"cannot start the serving thread");
        return false;
    }
    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(s->server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(port != 0);
    s->port = port;
    snprintf(s->url, sizeof s->url, "http://127.0.0.1:%u/mcp", (unsigned)port);
    return port != 0;
}

static void stop_serving(struct serving *s) {
    CHECK_STATUS(ferromcp_server_shutdown(s->server), FERROMCP_OK);
    pthread_join(s->thread, NULL);
    CHECK_STATUS(s->status, FERROMCP_OK);
}

/* ---- client side ---- */

static atomic_int input_asked = 0;

/* The client's elicitation callback: accepts, with what the question wants. */
static void on_input(void *userdata, ferromcp_input_kind kind, const char *params,
                     size_t params_len, ferromcp_call *call) {
    CHECK(userdata == (void *)&input_asked);
    CHECK(kind == FERROMCP_INPUT_ELICITATION);
    CHECK(strlen(params) == params_len);
    atomic_fetch_add(&input_asked, 1);
    if (strstr(params, "Proceed?") != NULL) {
        CHECK_STATUS(ferromcp_call_respond(call, "{\"action\":\"accept\",\"content\":{\"ok\":true}}"),
                     FERROMCP_OK);
    } else if (strstr(params, "Your name?") != NULL) {
        CHECK_STATUS(ferromcp_call_respond(call,
                                           "{\"action\":\"accept\",\"content\":{\"name\":\"Ada\"}}"),
                     FERROMCP_OK);
    } else {
        CHECK(!"an unexpected question");
        ferromcp_call_respond(call, "{\"action\":\"decline\"}");
    }
}

static ferromcp_client *connect_client(const char *url, bool with_callback) {
    ferromcp_client_options *options = NULL;
    /* Without a callback, the capability is declared in the options. */
    CHECK_STATUS(ferromcp_client_options_new(
                     with_callback ? "{\"name\":\"c-tasks\",\"version\":\"1.0.0\",\"timeoutMs\":20000}"
                                   : "{\"name\":\"c-tasks-manual\",\"version\":\"1.0.0\","
                                     "\"timeoutMs\":20000,\"capabilities\":{\"elicitation\":{}}}",
                     &options),
                 FERROMCP_OK);
    if (options == NULL) {
        return NULL;
    }
    if (with_callback) {
        CHECK_STATUS(ferromcp_client_options_on_input(options, FERROMCP_INPUT_ELICITATION,
                                                      on_input, &input_asked, NULL),
                     FERROMCP_OK);
    }
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_http(url, NULL, options, &client), FERROMCP_OK);
    ferromcp_client_options_free(options);
    return client;
}

/* A plain call succeeds: the server still serves. */
static void check_still_serving_ping(const ferromcp_client *client, const char *after) {
    char *result = NULL;
    ferromcp_status status =
        ferromcp_client_call_tool(client, "ping", NULL, 0, NULL, NULL, NULL, &result);
    if (status != FERROMCP_OK || strstr(result, "pong") == NULL) {
        fprintf(stderr, "after %s: ping gave %s (%s)\n", after, ferromcp_status_message(status),
                result ? result : ferromcp_last_error_message());
        check_failures++;
    }
    ferromcp_string_free(result);
}

/* A plain call and a quick task both succeed: the server still serves. */
static void check_still_serving(const ferromcp_client *client, const char *after) {
    char *result = NULL;
    ferromcp_status status =
        ferromcp_client_call_tool(client, "ping", NULL, 0, NULL, NULL, NULL, &result);
    if (status != FERROMCP_OK || strstr(result, "pong") == NULL) {
        fprintf(stderr, "after %s: ping gave %s (%s)\n", after, ferromcp_status_message(status),
                result ? result : ferromcp_last_error_message());
        check_failures++;
    }
    ferromcp_string_free(result);
    result = NULL;
    status = ferromcp_client_call_tool(client, "quick", "{\"label\":\"again\"}", 0, NULL, NULL,
                                       NULL, &result);
    if (status != FERROMCP_OK || strstr(result, "quick again") == NULL) {
        fprintf(stderr, "after %s: a quick task gave %s (%s)\n", after,
                ferromcp_status_message(status), result ? result : ferromcp_last_error_message());
        check_failures++;
    }
    ferromcp_string_free(result);
}

/* ---- 1. a ~3 s task with progress ---- */

struct progress_seen {
    int calls;
    int distinct_steps;
    int last_step;
    bool in_order;
    bool malformed;
    char last_status[32];
};

static void on_status_progress(void *userdata, const char *status, const char *state_json) {
    struct progress_seen *seen = userdata;
    seen->calls++;
    snprintf(seen->last_status, sizeof seen->last_status, "%s", status);
    CHECK_CONTAINS(state_json, "\"taskId\"");
    char *message = get(state_json, "/statusMessage");
    if (message != NULL && strcmp(status, "working") == 0) {
        int k = 0;
        char tail[8] = "";
        if (sscanf(message, "step (%d/30%7s", &k, tail) == 2 && strcmp(tail, ")") == 0) {
            if (k != seen->last_step) {
                seen->distinct_steps++;
            }
            seen->in_order = seen->in_order && k >= seen->last_step;
            seen->last_step = k;
        } else {
            fprintf(stderr, "unexpected status message: %s\n", message);
            seen->malformed = true;
        }
    }
    ferromcp_string_free(message);
}

static void test_long_task_with_progress(const ferromcp_client *client) {
    double started = now_s();
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "long_progress", NULL, 0, NULL, &task),
                 FERROMCP_OK);
    if (task == NULL) {
        return;
    }
    CHECK(ferromcp_task_id(task) != NULL);
    struct progress_seen seen = {.in_order = true};
    char *result = NULL;
    CHECK_STATUS(ferromcp_task_result(task, 0, on_status_progress, &seen, NULL, &result),
                 FERROMCP_OK);
    double took = now_s() - started;
    CHECK_CONTAINS(result, "finished 30 steps");
    ferromcp_string_free(result);
    /* The status message changed several times, in order, then completed. */
    if (seen.distinct_steps < 3) {
        fprintf(stderr, "only %d distinct step messages seen (%d status changes)\n",
                seen.distinct_steps, seen.calls);
        check_failures++;
    }
    CHECK(seen.in_order);
    CHECK(!seen.malformed);
    CHECK(strcmp(seen.last_status, "completed") == 0);
    CHECK(took >= 2.9);
    CHECK(atomic_load(&long_steps_done) == 30);
    /* tasks/get after the end: completed, the result inside. */
    char *state = wait_for_status(task, "completed");
    CHECK_CONTAINS(state, "finished 30 steps");
    ferromcp_string_free(state);
    fprintf(stderr, "  long task: %.1f s, %d status changes, %d distinct steps, last %d/30\n",
            took, seen.calls, seen.distinct_steps, seen.last_step);
    ferromcp_task_free(task);
}

/* ---- 2. a task that asks for input and resumes ---- */

static void test_input_by_callback(const ferromcp_client *client) {
    /* Followed by ferromcp_task_result(): the input callback answers. */
    int before = atomic_load(&input_asked);
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "ask_confirm", NULL, 0, NULL, &task),
                 FERROMCP_OK);
    if (task != NULL) {
        CHECK(ferromcp_task_id(task) != NULL);
        char *result = NULL;
        CHECK_STATUS(ferromcp_task_result(task, 0, NULL, NULL, NULL, &result), FERROMCP_OK);
        CHECK_CONTAINS(result, "action=accept ok=true");
        ferromcp_string_free(result);
        CHECK(atomic_load(&input_asked) == before + 1);
        ferromcp_task_free(task);
    }

    /* The whole call in one: ferromcp_client_call_tool() follows the task. */
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "ask_confirm", NULL, 0, NULL, NULL, NULL,
                                           &result),
                 FERROMCP_OK);
    CHECK_CONTAINS(result, "action=accept ok=true");
    ferromcp_string_free(result);
    CHECK(atomic_load(&input_asked) == before + 2);

    /* FERROMCP_TOOL_TASK_BY_CALLBACK: the question comes before the task. */
    int started_before = atomic_load(&by_callback_started);
    result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "ask_then_task", NULL, 0, NULL, NULL, NULL,
                                           &result),
                 FERROMCP_OK);
    CHECK_CONTAINS(result, "hello Ada (task=yes)");
    ferromcp_string_free(result);
    CHECK(atomic_load(&by_callback_started) == started_before + 1);
    CHECK(atomic_load(&input_asked) == before + 3);
}

/* Answered by the caller; returns the finished task for the update test. */
static ferromcp_task *test_input_by_respond(const ferromcp_client *manual) {
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(manual, "ask_confirm", NULL, 0, NULL, &task),
                 FERROMCP_OK);
    if (task == NULL) {
        return NULL;
    }
    CHECK(ferromcp_task_id(task) != NULL);
    char *state = wait_for_status(task, "input_required");
    /* The question under the handler's own key. */
    CHECK(is(state, "/inputRequests/confirm/method", "elicitation/create"));
    CHECK(is(state, "/inputRequests/confirm/params/message", "Proceed?"));
    ferromcp_string_free(state);
    CHECK_STATUS(ferromcp_task_respond(
                     task, "{\"confirm\":{\"action\":\"accept\",\"content\":{\"ok\":false}}}"),
                 FERROMCP_OK);
    char *result = NULL;
    CHECK_STATUS(ferromcp_task_result(task, 0, NULL, NULL, NULL, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "action=accept ok=false");
    ferromcp_string_free(result);
    state = wait_for_status(task, "completed");
    CHECK_CONTAINS(state, "action=accept ok=false");
    CHECK(strstr(state ? state : "", "inputRequests") == NULL);
    ferromcp_string_free(state);
    return task;
}

/* ---- 3. cancelled tasks ---- */

static void wait_slot_done(struct cancel_slot *slot) {
    for (int i = 0; i < 1000 && atomic_load(&slot->done) == 0; i++) {
        sleep_ms(10);
    }
    CHECK(atomic_load(&slot->done) == 1);
}

static void test_cancel_by_handle_call(const ferromcp_client *client) {
    struct cancel_slot *slot = &cancel_slots[0];
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "until_cancelled", "{\"slot\":0}", 0,
                                                 NULL, &task),
                 FERROMCP_OK);
    if (task == NULL) {
        return;
    }
    for (int i = 0; i < 500 && atomic_load(&slot->started) == 0; i++) {
        sleep_ms(10);
    }
    CHECK(atomic_load(&slot->started) == 1);
    char *state = NULL;
    CHECK_STATUS(ferromcp_task_refresh(task, &state), FERROMCP_OK);
    CHECK(is(state, "/status", "working"));
    ferromcp_string_free(state);
    CHECK_STATUS(ferromcp_task_cancel(task), FERROMCP_OK);
    state = wait_for_status(task, "cancelled");
    ferromcp_string_free(state);
    wait_slot_done(slot);
    CHECK(atomic_load(&slot->saw_cancel) == 1);
    CHECK(atomic_load(&slot->hook_called) == 1);
    /* Nobody waits for the handler's late answer. */
    CHECK(atomic_load(&slot->respond_status) == FERROMCP_REQUEST_CANCELLED);
    /* It stays cancelled, and following it says so. */
    char *result = NULL;
    CHECK_STATUS(ferromcp_task_result(task, 0, NULL, NULL, NULL, &result),
                 FERROMCP_PROTOCOL_ERROR);
    CHECK(result == NULL);
    state = wait_for_status(task, "cancelled");
    CHECK(strstr(state ? state : "", "not cancelled") == NULL);
    ferromcp_string_free(state);
    /* Cancelling again is acknowledged, and changes nothing. */
    CHECK_STATUS(ferromcp_task_cancel(task), FERROMCP_OK);
    ferromcp_task_free(task);
}

/* The caller cancels once it sees the handler at work: fired from the
 * status callback, while ferromcp_task_result() follows the task. */
struct fire_job {
    ferromcp_cancel_handle *cancel;
    int fired;
};

static void fire_when_working(void *userdata, const char *status, const char *state_json) {
    struct fire_job *job = userdata;
    if (job->fired == 0 && strcmp(status, "working") == 0 &&
        strstr(state_json, "\"statusMessage\":\"started") != NULL) {
        job->fired = 1;
        CHECK_STATUS(ferromcp_cancel_handle_cancel(job->cancel), FERROMCP_OK);
    }
}

static void test_cancel_during_result(const ferromcp_client *client) {
    struct cancel_slot *slot = &cancel_slots[1];
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "until_cancelled", "{\"slot\":1}", 0,
                                                 NULL, &task),
                 FERROMCP_OK);
    if (task == NULL) {
        return;
    }
    ferromcp_cancel_handle *cancel = NULL;
    CHECK_STATUS(ferromcp_cancel_handle_new(&cancel), FERROMCP_OK);
    struct fire_job job = {cancel, 0};
    char *result = NULL;
    CHECK_STATUS(ferromcp_task_result(task, 0, fire_when_working, &job, cancel, &result),
                 FERROMCP_REQUEST_CANCELLED);
    CHECK(result == NULL);
    CHECK(job.fired == 1);
    ferromcp_cancel_handle_free(cancel);
    /* The task was cancelled on the server too, and its handler saw it. */
    char *state = wait_for_status(task, "cancelled");
    ferromcp_string_free(state);
    wait_slot_done(slot);
    CHECK(atomic_load(&slot->saw_cancel) == 1);
    CHECK(atomic_load(&slot->hook_called) == 1);
    ferromcp_task_free(task);
}

/* ---- 4. an expired result ---- */

/* tasks/get of `id` through a new handle: -32602, nothing else. */
static void check_gone(const ferromcp_client *client, const char *id) {
    ferromcp_task *fresh = NULL;
    CHECK_STATUS(ferromcp_client_tool_task(client, id, &fresh), FERROMCP_OK);
    char *state = NULL;
    CHECK_PEER_ERROR(ferromcp_task_refresh(fresh, &state), -32602);
    CHECK(state == NULL);
    char *result = NULL;
    CHECK_PEER_ERROR(ferromcp_task_result(fresh, 0, NULL, NULL, NULL, &result), -32602);
    CHECK(result == NULL);
    ferromcp_task_free(fresh);
}

/* A task that completes at once on a server keeping finished tasks until
 * max(created + 300 ms, finished + keep_ms): there until then, then gone. */
static void test_expired_result(int keep_ms) {
    char options[160];
    snprintf(options, sizeof options,
             "{\"tasks\":{\"ttlMs\":300,\"keepFinishedMs\":%d,\"pollIntervalMs\":50}}", keep_ms);
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new_with_options("c-tasks-expiry", "1.0.0", options, &server),
                 FERROMCP_OK);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "quick", NULL, OBJECT_SCHEMA, NULL,
                                             FERROMCP_TOOL_TASK_REQUIRED, quick, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "ping", NULL, OBJECT_SCHEMA, NULL, 0, ping,
                                             NULL, NULL),
                 FERROMCP_OK);
    struct serving serving = {.server = server};
    if (!start_serving(&serving)) {
        ferromcp_server_free(server);
        return;
    }
    ferromcp_client *client = connect_client(serving.url, true);
    ferromcp_task *task = NULL;
    double created = now_s();
    if (client != NULL) {
        CHECK_STATUS(ferromcp_client_start_tool_task(client, "quick", "{\"label\":\"ttl\"}", 0,
                                                     NULL, &task),
                     FERROMCP_OK);
    }
    if (task != NULL) {
        CHECK(ferromcp_task_id(task) != NULL);
        char *state = wait_for_status(task, "completed");
        double seen = now_s() - created;
        CHECK_CONTAINS(state, "quick ttl");
        /* ttlMs covers the time a finished task is kept: it grows to
         * finished + keepFinishedMs when that is later. */
        char *ttl = get(state, "/ttlMs");
        long ttl_ms = ttl != NULL ? strtol(ttl, NULL, 10) : -1;
        ferromcp_string_free(ttl);
        CHECK(ttl_ms >= (keep_ms > 300 ? keep_ms : 300) && ttl_ms < keep_ms + 2000);
        ferromcp_string_free(state);
        if (keep_ms == 0 && now_s() - created < 0.2) {
            /* Before created + ttlMs: still there. */
            state = NULL;
            CHECK_STATUS(ferromcp_task_refresh(task, &state), FERROMCP_OK);
            CHECK(is(state, "/status", "completed"));
            ferromcp_string_free(state);
        }
        if (keep_ms > 0) {
            /* Past created + ttlMs, but finished + keepFinishedMs holds it. */
            while (now_s() - created < 0.6) {
                sleep_ms(20);
            }
            state = NULL;
            CHECK_STATUS(ferromcp_task_refresh(task, &state), FERROMCP_OK);
            CHECK(is(state, "/status", "completed"));
            CHECK_CONTAINS(state, "quick ttl");
            ferromcp_string_free(state);
        }
        /* Past both: gone. */
        double gone_after = (keep_ms > 300 ? keep_ms : 300) / 1000.0 + 0.5;
        while (now_s() - created < gone_after) {
            sleep_ms(20);
        }
        state = NULL;
        CHECK_PEER_ERROR(ferromcp_task_refresh(task, &state), -32602);
        CHECK(state == NULL);
        check_gone(client, ferromcp_task_id(task));
        /* The handle itself still holds the result it saw (no request). */
        char *result = NULL;
        CHECK_STATUS(ferromcp_task_result(task, 0, NULL, NULL, NULL, &result), FERROMCP_OK);
        CHECK_CONTAINS(result, "quick ttl");
        ferromcp_string_free(result);
        fprintf(stderr, "  keepFinishedMs %d: completed seen after %.2f s, gone after %.2f s\n",
                keep_ms, seen, gone_after);
        ferromcp_task_free(task);
    }
    if (client != NULL) {
        check_still_serving_ping(client, "an expired task");
    }
    ferromcp_client_free(client);
    stop_serving(&serving);
    ferromcp_server_free(server);
}

/* ---- 5. a skills directory with nested files ---- */

static char skills_root[64];

static bool write_file(const char *dir, const char *rel, const void *data, size_t len) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    /* mkdir -p of the parent directories */
    for (char *slash = strchr(path + strlen(dir) + 1, '/'); slash != NULL;
         slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST) {
            fprintf(stderr, "mkdir %s: %s\n", path, strerror(errno));
            return false;
        }
        *slash = '/';
    }
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        fprintf(stderr, "fopen %s: %s\n", path, strerror(errno));
        return false;
    }
    bool ok = fwrite(data, 1, len, file) == len;
    return fclose(file) == 0 && ok;
}

#define TEXT(s) s, sizeof(s) - 1

static const char SIMPLE_MD[] =
    "---\nname: simple\ndescription: A skill at the top of the directory\n---\n\n# Simple\n";
static const char DEEP_MD[] =
    "---\nname: deep-skill\ndescription: A skill three levels down\n---\n\n"
    "# Deep\n\nSee `references/guides/intro.md` and `assets/data/table.bin`.\n";
static const char INTRO_MD[] = "# Intro\n\nNested two folders down inside the skill.\n";
static const char RUN_SH[] = "#!/bin/sh\necho deep\n";
static const unsigned char TABLE_BIN[] = {0x00, 0x01, 0x02, 0xff, 0xfe, 0x7f, 0x80, 0x00,
                                          'b',  'i',  'n',  0x0a, 0x0d, 0x00, 0x10, 0x20};

static bool make_skills_dir(void) {
    snprintf(skills_root, sizeof skills_root, "/tmp/ferromcp-c-skills-XXXXXX");
    if (mkdtemp(skills_root) == NULL) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        skills_root[0] = '\0';
        return false;
    }
    bool ok = write_file(skills_root, "simple/SKILL.md", TEXT(SIMPLE_MD)) &&
              write_file(skills_root, "org/team/deep-skill/SKILL.md", TEXT(DEEP_MD)) &&
              write_file(skills_root, "org/team/deep-skill/references/guides/intro.md",
                         TEXT(INTRO_MD)) &&
              write_file(skills_root, "org/team/deep-skill/scripts/run.sh", TEXT(RUN_SH)) &&
              write_file(skills_root, "org/team/deep-skill/assets/data/table.bin", TABLE_BIN,
                         sizeof TABLE_BIN) &&
              write_file(skills_root, "org/team/deep-skill/.hidden", TEXT("secret\n"));
    /* A link out of the directory is skipped, never published. */
    char link_path[256];
    snprintf(link_path, sizeof link_path, "%s/org/team/deep-skill/passwd", skills_root);
    ok = ok && symlink("/etc/passwd", link_path) == 0;
    CHECK(ok);
    return ok;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_skills_dir(void) {
    if (skills_root[0] != '\0') {
        CHECK(nftw(skills_root, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0);
        CHECK(access(skills_root, F_OK) != 0);
    }
}

static void test_skills_nested(const ferromcp_client *client) {
    char *page = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_SKILLS, NULL, &page), FERROMCP_OK);
    CHECK_CONTAINS(page, "\"skill://simple/SKILL.md\"");
    CHECK_CONTAINS(page, "\"skill://org/team/deep-skill/SKILL.md\"");
    /* Hidden files and links are not published. */
    CHECK(strstr(page ? page : "", ".hidden") == NULL);
    CHECK(strstr(page ? page : "", "deep-skill/passwd") == NULL);
    ferromcp_string_free(page);

    char *entry = NULL;
    CHECK_STATUS(ferromcp_client_request(client, "skills/get",
                                         "{\"uri\":\"skill://org/team/deep-skill/SKILL.md\"}", 0,
                                         NULL, NULL, NULL, &entry),
                 FERROMCP_OK);
    CHECK(is(entry, "/skill/frontmatter/name", "deep-skill"));
    CHECK_CONTAINS(entry, "references/guides/intro.md");
    CHECK_CONTAINS(entry, "assets/data/table.bin");
    ferromcp_string_free(entry);

    ferromcp_skill *skill = NULL;
    CHECK_STATUS(ferromcp_client_load_skill(client, "skill://org/team/deep-skill/SKILL.md", &skill),
                 FERROMCP_OK);
    if (skill == NULL) {
        return;
    }
    CHECK(strcmp(ferromcp_skill_md(skill), DEEP_MD) == 0);
    struct {
        const char *file;
        const void *bytes;
        size_t len;
    } files[] = {
        {"references/guides/intro.md", INTRO_MD, sizeof INTRO_MD - 1},
        {"scripts/run.sh", RUN_SH, sizeof RUN_SH - 1},
        {"assets/data/table.bin", TABLE_BIN, sizeof TABLE_BIN},
        /* by URI too */
        {"skill://org/team/deep-skill/references/guides/intro.md", INTRO_MD,
         sizeof INTRO_MD - 1},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        uint8_t *data = NULL;
        size_t len = 0;
        CHECK_STATUS(ferromcp_skill_read(skill, files[i].file, &data, &len), FERROMCP_OK);
        if (data == NULL || len != files[i].len || memcmp(data, files[i].bytes, len) != 0) {
            fprintf(stderr, "%s: %zu bytes read, not the %zu written\n", files[i].file, len,
                    files[i].len);
            check_failures++;
        }
        ferromcp_bytes_free(data, len);
    }
    ferromcp_skill_free(skill);

    /* The top-level one, loaded from its list entry. */
    skill = NULL;
    CHECK_STATUS(ferromcp_client_load_skill(client, "skill://simple/SKILL.md", &skill),
                 FERROMCP_OK);
    CHECK(skill != NULL && strcmp(ferromcp_skill_md(skill), SIMPLE_MD) == 0);
    ferromcp_skill_free(skill);

    /* A nested file is a resource of its own too. */
    char *contents = NULL;
    CHECK_STATUS(ferromcp_client_read_resource(
                     client, "skill://org/team/deep-skill/references/guides/intro.md", &contents),
                 FERROMCP_OK);
    CHECK_CONTAINS(contents, "Nested two folders down");
    ferromcp_string_free(contents);
}

/* ---- 6. bad input ---- */

static void check_task_id_refused(const ferromcp_client *client, const char *id,
                                  const char *what) {
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_tool_task(client, id, &task), FERROMCP_OK);
    if (task == NULL) {
        return;
    }
    char *state = NULL;
    fprintf(stderr, "  %s: tasks/get\n", what);
    CHECK_PEER_ERROR(ferromcp_task_refresh(task, &state), -32602);
    CHECK(state == NULL);
    char *result = NULL;
    CHECK_PEER_ERROR(ferromcp_task_result(task, 0, NULL, NULL, NULL, &result), -32602);
    CHECK(result == NULL);
    /* tasks/update and tasks/cancel: the spec's SHOULD is -32602 too. */
    CHECK_PEER_ERROR(ferromcp_task_respond(task, "{\"confirm\":{\"action\":\"decline\"}}"),
                     -32602);
    CHECK_PEER_ERROR(ferromcp_task_cancel(task), -32602);
    ferromcp_task_free(task);
    check_still_serving(client, what);
}

static void test_unknown_task_ids(const ferromcp_client *client) {
    check_task_id_refused(client, "0123456789abcdef0123456789abcdef", "an unknown task id");
    check_task_id_refused(client, "not-a-task-id", "a malformed task id");
    check_task_id_refused(client, "", "an empty task id");
    check_task_id_refused(client, "../../etc/passwd", "a task id that is a path");
}

static void test_tampered_task_id(const ferromcp_client *client) {
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "until_cancelled", "{\"slot\":2}", 0,
                                                 NULL, &task),
                 FERROMCP_OK);
    if (task == NULL) {
        return;
    }
    const char *id = ferromcp_task_id(task);
    CHECK(id != NULL && strlen(id) >= 8);
    if (id == NULL || strlen(id) < 8) {
        ferromcp_task_free(task);
        return;
    }
    char tampered[256];
    snprintf(tampered, sizeof tampered, "%s", id);
    size_t at = strlen(tampered) / 2;
    tampered[at] = tampered[at] == '0' ? '1' : '0';
    CHECK(strcmp(tampered, id) != 0);
    check_task_id_refused(client, tampered, "a tampered task id");
    /* Cancelling the tampered id left the real task alone. */
    char *state = NULL;
    CHECK_STATUS(ferromcp_task_refresh(task, &state), FERROMCP_OK);
    CHECK(is(state, "/status", "working"));
    ferromcp_string_free(state);
    CHECK(atomic_load(&cancel_slots[2].done) == 0);
    CHECK_STATUS(ferromcp_task_cancel(task), FERROMCP_OK);
    state = wait_for_status(task, "cancelled");
    ferromcp_string_free(state);
    wait_slot_done(&cancel_slots[2]);
    ferromcp_task_free(task);
}

/* tasks/update of a finished task: acknowledged, and nothing changes. */
static void test_update_of_finished_task(const ferromcp_client *manual, ferromcp_task *done) {
    if (done == NULL) {
        return;
    }
    char *before = wait_for_status(done, "completed");
    CHECK_STATUS(ferromcp_task_respond(
                     done, "{\"confirm\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}"),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_task_respond(done, "{\"never-asked\":{\"action\":\"decline\"}}"),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_task_cancel(done), FERROMCP_OK);
    sleep_ms(100);
    char *after = wait_for_status(done, "completed");
    char *result_before = get(before, "/result");
    char *result_after = get(after, "/result");
    CHECK(result_before != NULL && result_after != NULL &&
          strcmp(result_before, result_after) == 0);
    CHECK_CONTAINS(result_after, "action=accept ok=false");
    ferromcp_string_free(result_before);
    ferromcp_string_free(result_after);
    ferromcp_string_free(before);
    ferromcp_string_free(after);
    char *result = NULL;
    CHECK_STATUS(ferromcp_task_result(done, 0, NULL, NULL, NULL, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "action=accept ok=false");
    ferromcp_string_free(result);
    check_still_serving(manual, "an update of a finished task");
}

/* Neither a read nor a load reaches outside the skills directory: the
 * spec's resource-not-found error (-32602 since 2026-07-28), no content. */
static void test_skill_path_escapes(const ferromcp_client *client) {
    static const char *const uris[] = {
        "skill://../../etc/passwd",
        "skill://org/team/deep-skill/../../../../../etc/passwd",
        "skill://simple/../../etc/passwd",
        "skill://org/team/deep-skill/passwd",
        "skill://org/team/deep-skill/.hidden",
        "skill://simple/%2e%2e/%2e%2e/etc/passwd",
        "skill:///etc/passwd",
    };
    for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++) {
        char *contents = NULL;
        fprintf(stderr, "  resources/read %s\n", uris[i]);
        CHECK_PEER_ERROR(ferromcp_client_read_resource(client, uris[i], &contents), -32602);
        fprintf(stderr, "    -> %d %s\n", (int)ferromcp_last_error_code(),
                ferromcp_last_error_message());
        CHECK(contents == NULL);
        ferromcp_string_free(contents);
        check_still_serving(client, uris[i]);
    }
    static const char *const skill_uris[] = {
        "skill://../../etc/passwd",
        "skill://../../etc/SKILL.md",
        "skill://simple/../../etc/passwd/SKILL.md",
        "skill://org/team/deep-skill/../../../simple/SKILL.md",
    };
    for (size_t i = 0; i < sizeof skill_uris / sizeof skill_uris[0]; i++) {
        ferromcp_skill *skill = NULL;
        char *entry = NULL;
        char params[256];
        snprintf(params, sizeof params, "{\"uri\":\"%s\"}", skill_uris[i]);
        fprintf(stderr, "  skills/get and load_skill %s\n", skill_uris[i]);
        CHECK_PEER_ERROR(
            ferromcp_client_request(client, "skills/get", params, 0, NULL, NULL, NULL, &entry),
            -32602);
        CHECK(entry == NULL);
        CHECK_PEER_ERROR(ferromcp_client_load_skill(client, skill_uris[i], &skill), -32602);
        fprintf(stderr, "    -> %d %s\n", (int)ferromcp_last_error_code(),
                ferromcp_last_error_message());
        CHECK(skill == NULL);
        ferromcp_skill_free(skill);
        check_still_serving(client, skill_uris[i]);
    }
    /* A loaded skill refuses paths it does not list, without a request. */
    ferromcp_skill *skill = NULL;
    CHECK_STATUS(ferromcp_client_load_skill(client, "skill://org/team/deep-skill/SKILL.md", &skill),
                 FERROMCP_OK);
    if (skill != NULL) {
        static const char *const files[] = {
            "../../etc/passwd",
            "../../../../../../etc/passwd",
            "/etc/passwd",
            "passwd",
            ".hidden",
            "references/../../simple/SKILL.md",
            "skill://org/team/deep-skill/../../../../etc/passwd",
        };
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
            uint8_t *data = NULL;
            size_t len = 0;
            CHECK_STATUS(ferromcp_skill_read(skill, files[i], &data, &len),
                         FERROMCP_PROTOCOL_ERROR);
            CHECK(data == NULL);
            ferromcp_bytes_free(data, len);
        }
        ferromcp_skill_free(skill);
    }
    check_still_serving(client, "skill reads outside the skill");
}

/* ---- the wire itself (requests the client API does not send) ---- */

#define META_2026(caps)                                                                   \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","              \
    "\"io.modelcontextprotocol/clientCapabilities\":" caps ","                             \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}"
#define WITH_TASKS "{\"extensions\":{\"io.modelcontextprotocol/tasks\":{}}}"

/* One 2026-07-28 POST of `method` with `params` (a JSON object's members,
 * then the _meta) and, when not NULL, the Mcp-Name header `name` (a task
 * request's taskId); the whole HTTP response (free() it), or NULL. */
static char *raw_post(uint16_t port, const char *method, const char *name, const char *params) {
    char body[1024];
    int body_len = snprintf(body, sizeof body,
                            "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"%s\",\"params\":{%s}}",
                            method, params);
    char name_header[128] = "";
    if (name != NULL) {
        snprintf(name_header, sizeof name_header, "Mcp-Name: %s\r\n", name);
    }
    char request[2048];
    int len = snprintf(request, sizeof request,
                       "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                       "Content-Type: application/json\r\n"
                       "Accept: application/json, text/event-stream\r\n"
                       "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: %s\r\n%s"
                       "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                       (unsigned)port, method, name_header, body_len, body);
    return http_exchange(port, request, (size_t)len);
}

/* The acknowledgements' shape, malformed task ids, and a client without
 * the extension, on the wire. */
static void test_raw_task_requests(const ferromcp_client *client, uint16_t port,
                                   const char *finished_id) {
    char params[512];
    snprintf(params, sizeof params,
             "\"taskId\":\"%s\",\"inputResponses\":{\"confirm\":{\"action\":\"decline\"}},"
             META_2026(WITH_TASKS), finished_id);
    char *r = raw_post(port, "tasks/update", finished_id, params);
    /* An empty acknowledgement, resultType "complete". */
    CHECK_CONTAINS(r, "\"resultType\":\"complete\"");
    CHECK(strstr(r ? r : "", "\"error\"") == NULL);
    free(r);
    snprintf(params, sizeof params, "\"taskId\":\"%s\"," META_2026(WITH_TASKS), finished_id);
    r = raw_post(port, "tasks/cancel", finished_id, params);
    CHECK_CONTAINS(r, "\"resultType\":\"complete\"");
    CHECK(strstr(r ? r : "", "\"error\"") == NULL);
    free(r);
    r = raw_post(port, "tasks/get", finished_id, params);
    CHECK_CONTAINS(r, "\"status\":\"completed\"");
    CHECK_CONTAINS(r, "action=accept ok=false");
    free(r);
    /* A taskId that is not a string: over HTTP the Mcp-Name header
     * mirrors the body, and no header can match a number (-32020). */
    r = raw_post(port, "tasks/get", "42", "\"taskId\":42," META_2026(WITH_TASKS));
    CHECK_CONTAINS(r, "\"code\":-32020");
    free(r);
    /* No taskId and so no header: the header is required (-32020). */
    r = raw_post(port, "tasks/get", NULL, META_2026(WITH_TASKS));
    CHECK_CONTAINS(r, "Mcp-Name header is required");
    CHECK_CONTAINS(r, "\"code\":-32020");
    free(r);
    /* Mcp-Name naming another task than the body: refused, not routed. */
    r = raw_post(port, "tasks/get", "0123456789abcdef0123456789abcdef", params);
    CHECK_CONTAINS(r, "\"code\":-32020");
    CHECK(strstr(r ? r : "", "\"status\"") == NULL);
    free(r);
    /* A client that did not declare the extension: -32021, even for a
     * task that exists. */
    snprintf(params, sizeof params, "\"taskId\":\"%s\"," META_2026("{}"), finished_id);
    static const char *const methods[] = {"tasks/get", "tasks/cancel", "tasks/update"};
    for (size_t i = 0; i < 3; i++) {
        r = raw_post(port, methods[i], finished_id, params);
        CHECK_CONTAINS(r, "\"code\":-32021");
        free(r);
    }
    check_still_serving(client, "malformed task requests on the wire");
}

int main(void) {
    double started = now_s();
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new_with_options(
                     "c-tasks", "1.0.0",
                     "{\"tasks\":{\"ttlMs\":600000,\"keepFinishedMs\":60000,\"pollIntervalMs\":50}}",
                     &server),
                 FERROMCP_OK);
    if (server == NULL) {
        return check_report("test_tasks");
    }
    add_tools(server);
    bool have_skills = make_skills_dir();
    if (have_skills) {
        char *uris = NULL;
        CHECK_STATUS(ferromcp_server_add_skills_dir(server, skills_root, &uris), FERROMCP_OK);
        CHECK_CONTAINS(uris, "\"skill://simple/SKILL.md\"");
        CHECK_CONTAINS(uris, "\"skill://org/team/deep-skill/SKILL.md\"");
        ferromcp_string_free(uris);
    }
    struct serving serving = {.server = server};
    if (start_serving(&serving)) {
        ferromcp_client *client = connect_client(serving.url, true);
        ferromcp_client *manual = connect_client(serving.url, false);
        if (client != NULL && manual != NULL) {
            fprintf(stderr, "1. a ~3 s task with progress\n");
            test_long_task_with_progress(client);
            fprintf(stderr, "2. a task that asks for input and resumes\n");
            test_input_by_callback(client);
            ferromcp_task *answered = test_input_by_respond(manual);
            fprintf(stderr, "3. cancelled tasks\n");
            test_cancel_by_handle_call(client);
            test_cancel_during_result(client);
            fprintf(stderr, "5. skills, nested\n");
            if (have_skills) {
                test_skills_nested(client);
            }
            fprintf(stderr, "6. bad input\n");
            test_unknown_task_ids(client);
            test_tampered_task_id(client);
            test_update_of_finished_task(manual, answered);
            if (answered != NULL && ferromcp_task_id(answered) != NULL) {
                test_raw_task_requests(client, serving.port, ferromcp_task_id(answered));
            }
            ferromcp_task_free(answered);
            if (have_skills) {
                test_skill_path_escapes(client);
            }
        }
        ferromcp_client_free(manual);
        ferromcp_client_free(client);
        stop_serving(&serving);
    }
    ferromcp_server_free(server);
    fprintf(stderr, "4. an expired result\n");
    test_expired_result(0);
    test_expired_result(1500);
    remove_skills_dir();
    /* Each on_cancel hook's userdata released exactly once. */
    for (int i = 0; i < 3; i++) {
        CHECK(atomic_load(&cancel_slots[i].hook_freed) == 1);
    }
    fprintf(stderr, "test_tasks: %.1f s\n", now_s() - started);
    return check_report("test_tasks");
}
