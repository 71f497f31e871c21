/* The C client end to end, against the Rust conformance server
 * (target/bin/everything-server --stdio, built by `make build`): each call,
 * a peer error's JSON-RPC code, a timeout, a cancel fired from another
 * thread, progress, elicitation answered by a C callback whose userdata
 * is released exactly once, and a server that exits mid-call. Run from the repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "check.h"

#define SERVER "target/bin/everything-server"

/* ---- the elicitation callback ---- */

static atomic_int finalized = 0;
static atomic_int asked = 0;
/* While set, the callback holds its answer this long (ms): the call
 * waiting on it then times out or is cancelled first. */
static atomic_int hold_ms = 0;
static atomic_int holding = 0;
static atomic_int late_answer_status = -1;

static void count_finalizer(void *userdata) {
    CHECK(userdata == (void *)&finalized);
    atomic_fetch_add(&finalized, 1);
}

static void on_input(void *userdata, ferromcp_input_kind kind, const char *params,
                     size_t params_len, ferromcp_call *call) {
    CHECK(userdata == (void *)&finalized);
    CHECK(kind == FERROMCP_INPUT_ELICITATION);
    CHECK(strlen(params) == params_len);
    CHECK_CONTAINS(params, "requestedSchema");
    atomic_fetch_add(&asked, 1);
    int hold = atomic_load(&hold_ms);
    if (hold > 0) {
        atomic_fetch_add(&holding, 1);
        sleep_ms(hold);
        /* Nobody waits any more: the answer is discarded, and said so. */
        atomic_store(&late_answer_status,
                     ferromcp_call_respond(call, "{\"action\":\"decline\"}"));
        atomic_fetch_sub(&holding, 1);
        return;
    }
    CHECK_STATUS(ferromcp_call_respond(
                     call, "{\"action\":\"accept\",\"content\":{\"username\":\"ada\","
                           "\"email\":\"ada@example.com\"}}"),
                 FERROMCP_OK);
}

static void wait_until_released(void) {
    for (int i = 0; i < 500 && atomic_load(&holding) > 0; i++) sleep_ms(10);
}

/* ---- progress ---- */

struct progress_seen {
    int calls;
    double last;
    bool total_known;
    bool had_message;
};

static void on_progress(void *userdata, double progress, double total, const char *message) {
    struct progress_seen *seen = userdata;
    seen->calls++;
    seen->last = progress;
    seen->total_known = !isnan(total);
    seen->had_message = seen->had_message || message != NULL;
}

/* ---- cancel from another thread ---- */

static void *fire_later(void *cancel) {
    sleep_ms(300);
    CHECK_STATUS(ferromcp_cancel_handle_cancel(cancel), FERROMCP_OK);
    return NULL;
}

/* ---- listen ---- */

static atomic_int tool_changes = 0;
static atomic_int listen_finalized = 0;

static void on_note(void *userdata, const char *method, const char *params_json) {
    CHECK(userdata == (void *)&tool_changes);
    if (method != NULL && strcmp(method, "notifications/tools/list_changed") == 0) {
        CHECK(params_json != NULL);
        atomic_fetch_add(&tool_changes, 1);
    }
}

static void listen_finalizer(void *userdata) {
    CHECK(userdata == (void *)&tool_changes);
    atomic_fetch_add(&listen_finalized, 1);
}

/* ---- completion callbacks ---- */

struct done_seen {
    atomic_int called;
    int status;
    int code;
    bool had_text;
    pthread_t caller;
    bool other_thread;
};

static void on_done(void *userdata, ferromcp_status status, const char *result_json) {
    struct done_seen *seen = userdata;
    seen->status = status;
    seen->code = status == FERROMCP_PEER_ERROR ? ferromcp_last_error_code() : 0;
    seen->had_text = result_json != NULL && strstr(result_json, "\"content\"") != NULL;
    seen->other_thread = !pthread_equal(pthread_self(), seen->caller);
    atomic_fetch_add(&seen->called, 1);
}

static void wait_done(struct done_seen *seen) {
    for (int i = 0; i < 1000 && atomic_load(&seen->called) == 0; i++) sleep_ms(10);
    sleep_ms(50); /* a second call would show here */
    CHECK(atomic_load(&seen->called) == 1);
}

static char *get(const char *json, const char *pointer) {
    char *out = NULL;
    return ferromcp_json_get(json, pointer, &out) == FERROMCP_OK ? out : NULL;
}

static void test_options_are_checked(void) {
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new("{", &options), FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_client_options_new("{\"timeout\":1}", &options), FERROMCP_INVALID_JSON);
    CHECK_CONTAINS(ferromcp_last_error_message(), "unknown client setting \"timeout\"");
    CHECK_STATUS(ferromcp_client_options_new("{\"era\":\"old\"}", &options),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_client_options_new(NULL, NULL), FERROMCP_NULL_ARGUMENT);
    CHECK(options == NULL);
    CHECK_STATUS(ferromcp_client_options_new(NULL, &options), FERROMCP_OK);
    CHECK_STATUS(ferromcp_client_options_on_input(options, FERROMCP_INPUT_ROOTS, NULL, NULL, NULL),
                 FERROMCP_NULL_ARGUMENT);
    ferromcp_client_options_free(options);
    ferromcp_client_options_free(NULL);

    const char *bad_env[] = {"NO_EQUALS_SIGN", NULL};
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_stdio(SERVER, NULL, bad_env, NULL, NULL, &client),
                 FERROMCP_INVALID_ARGUMENT);
    CHECK_STATUS(ferromcp_client_connect_stdio(NULL, NULL, NULL, NULL, NULL, &client),
                 FERROMCP_NULL_ARGUMENT);
    CHECK(client == NULL);
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(NULL, "x", NULL, 0, NULL, NULL, NULL, &result),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_client_request(NULL, "tools/list", NULL, 0, NULL, NULL, NULL, &result),
                 FERROMCP_NULL_ARGUMENT);
    CHECK(result == NULL);
}

/* A server that exits while a call waits: the connection closed (not a
 * protocol error), and the message carries its last stderr lines. */
static void test_server_exit_is_connection_closed(void) {
    const char *args[] = {"-c", "read -r request; echo 'fatal: no config file' >&2; exit 3",
                          NULL};
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_stdio("sh", args, NULL, NULL, NULL, &client),
                 FERROMCP_OK);
    if (client == NULL) {
        return;
    }
    char *text = NULL;
    CHECK_STATUS(ferromcp_client_discover(client, &text), FERROMCP_CONNECTION_CLOSED);
    CHECK(text == NULL);
    CHECK_CONTAINS(ferromcp_last_error_message(), "fatal: no config file");
    /* A later call starts the program again (which exits again). */
    CHECK_STATUS(ferromcp_client_discover(client, &text), FERROMCP_CONNECTION_CLOSED);
    CHECK_CONTAINS(ferromcp_last_error_message(), "fatal: no config file");
    ferromcp_client_free(client);
}

static void test_calls(ferromcp_client *client) {
    char *text = NULL;
    CHECK_STATUS(ferromcp_client_discover(client, &text), FERROMCP_OK);
    CHECK_CONTAINS(text, "ferromcp-everything-server");
    ferromcp_string_free(text);

    /* One page at a time: the whole list result comes back. */
    text = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &text), FERROMCP_OK);
    CHECK_CONTAINS(text, "\"test_simple_text\"");
    ferromcp_string_free(text);
    text = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, "not-a-cursor", &text),
                 FERROMCP_PEER_ERROR);
    CHECK(text == NULL);
    CHECK(ferromcp_last_error_code() == -32602);
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_RESOURCES, NULL, &text), FERROMCP_OK);
    CHECK_CONTAINS(text, "test://static-text");
    ferromcp_string_free(text);
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_RESOURCE_TEMPLATES, NULL, &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "test://template/{id}/data");
    ferromcp_string_free(text);
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_PROMPTS, NULL, &text), FERROMCP_OK);
    CHECK_CONTAINS(text, "test_simple_prompt");
    ferromcp_string_free(text);

    CHECK_STATUS(ferromcp_client_call_tool(client, "test_simple_text", NULL, 0, NULL, NULL, NULL,
                                           &text),
                 FERROMCP_OK);
    char *first = get(text, "/content/0/text");
    CHECK(first != NULL && strlen(first) > 0);
    /* The result accessors: its text, not an error, no structured content. */
    char *joined = NULL;
    CHECK_STATUS(ferromcp_result_text(text, &joined), FERROMCP_OK);
    CHECK(joined != NULL && first != NULL && strcmp(joined, first) == 0);
    ferromcp_string_free(joined);
    bool failed = true;
    CHECK_STATUS(ferromcp_result_is_error(text, &failed), FERROMCP_OK);
    CHECK(!failed);
    char *structured = NULL;
    CHECK_STATUS(ferromcp_result_structured_json(text, &structured), FERROMCP_NOT_FOUND);
    CHECK(structured == NULL);
    ferromcp_string_free(first);
    ferromcp_string_free(text);

    /* A tool's own failure is a result, not a failed status. */
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_error_handling", "{}", 0, NULL, NULL,
                                           NULL, &text),
                 FERROMCP_OK);
    char *is_error = get(text, "/isError");
    CHECK(is_error != NULL && strcmp(is_error, "true") == 0);
    ferromcp_string_free(is_error);
    CHECK_STATUS(ferromcp_result_is_error(text, &failed), FERROMCP_OK);
    CHECK(failed);
    ferromcp_string_free(text);

    /* A JSON-RPC error: its code and data are readable on this thread. */
    text = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "no_such_tool", "{}", 0, NULL, NULL, NULL,
                                           &text),
                 FERROMCP_PEER_ERROR);
    CHECK(text == NULL);
    CHECK(ferromcp_last_error_code() == -32602);
    CHECK_CONTAINS(ferromcp_last_error_message(), "no_such_tool");
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_simple_text", "[1]", 0, NULL, NULL, NULL,
                                           &text),
                 FERROMCP_INVALID_JSON);

    struct progress_seen seen = {0};
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_tool_with_progress", NULL, 0,
                                           on_progress, &seen, NULL, &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "Progress test completed");
    ferromcp_string_free(text);
    CHECK(seen.calls == 3);
    CHECK(seen.last == 100.0);
    CHECK(seen.total_known);
    CHECK(seen.had_message);

    CHECK_STATUS(ferromcp_client_read_resource(client, "test://static-text", &text), FERROMCP_OK);
    CHECK_CONTAINS(text, "\"contents\"");
    ferromcp_string_free(text);
    CHECK_STATUS(ferromcp_client_get_prompt(client, "test_prompt_with_arguments",
                                            "{\"arg1\":\"alpha\",\"arg2\":\"beta\"}", &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "alpha");
    ferromcp_string_free(text);
    CHECK_STATUS(ferromcp_client_complete(client,
                                          "{\"type\":\"ref/prompt\",\"name\":\"test_prompt_with_"
                                          "arguments\"}",
                                          "arg1", "par", NULL, &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "\"paris\"");
    CHECK(strstr(text, "hello") == NULL);
    ferromcp_string_free(text);

    /* The generic path every typed call takes: any request a client sends. */
    CHECK_STATUS(ferromcp_client_request(client, "resources/read",
                                         "{\"uri\":\"test://static-text\"}", 0, NULL, NULL, NULL,
                                         &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "\"contents\"");
    ferromcp_string_free(text);
    text = NULL;
    CHECK_STATUS(ferromcp_client_request(client, "tools/delete", NULL, 0, NULL, NULL, NULL, &text),
                 FERROMCP_PROTOCOL_ERROR);
    CHECK(text == NULL);
    CHECK_CONTAINS(ferromcp_last_error_message(), "not a request a client sends");
    CHECK_STATUS(ferromcp_client_request(client, "tools/call", "[1]", 0, NULL, NULL, NULL, &text),
                 FERROMCP_INVALID_JSON);

    char *version = NULL;
    CHECK_STATUS(ferromcp_client_protocol_version(client, &version), FERROMCP_OK);
    CHECK(version != NULL && strlen(version) == 10);
    ferromcp_string_free(version);
}

static void test_listen(ferromcp_client *client) {
    ferromcp_listener *listener = NULL;
    CHECK_STATUS(ferromcp_client_listen(client, "{\"toolsListChanged\":1}", on_note, NULL, NULL,
                                        &listener),
                 FERROMCP_INVALID_JSON);
    CHECK(listener == NULL);
    CHECK_STATUS(ferromcp_client_listen(client, "{\"toolsListChanged\":true}", on_note,
                                        &tool_changes, listen_finalizer, &listener),
                 FERROMCP_OK);
    char *text = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_trigger_tool_change", NULL, 0, NULL,
                                           NULL, NULL, &text),
                 FERROMCP_OK);
    ferromcp_string_free(text);
    for (int i = 0; i < 500 && atomic_load(&tool_changes) == 0; i++) sleep_ms(10);
    CHECK(atomic_load(&tool_changes) >= 1);
    CHECK(atomic_load(&listen_finalized) == 0);
    ferromcp_listener_free(listener);
    /* Stopped and joined: the userdata is released before free returns. */
    CHECK(atomic_load(&listen_finalized) == 1);
    ferromcp_listener_free(NULL);
}

static void test_async(ferromcp_client *client) {
    struct done_seen ok = {.caller = pthread_self()};
    CHECK_STATUS(ferromcp_client_call_tool_async(client, "test_simple_text", NULL, 0, NULL,
                                                 on_done, &ok),
                 FERROMCP_OK);
    wait_done(&ok);
    CHECK(ok.status == FERROMCP_OK);
    CHECK(ok.had_text);
    CHECK(ok.other_thread);

    struct done_seen failed = {.caller = pthread_self()};
    CHECK_STATUS(ferromcp_client_call_tool_async(client, "no_such_tool", "{}", 0, NULL, on_done,
                                                 &failed),
                 FERROMCP_OK);
    wait_done(&failed);
    CHECK(failed.status == FERROMCP_PEER_ERROR);
    CHECK(failed.code == -32602);
    CHECK(!failed.had_text);

    /* Refused up front: `done` is never called. */
    struct done_seen refused = {.caller = pthread_self()};
    CHECK_STATUS(ferromcp_client_call_tool_async(client, "test_simple_text", "{", 0, NULL,
                                                 on_done, &refused),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_client_call_tool_async(client, "test_simple_text", NULL, 0, NULL, NULL,
                                                 NULL),
                 FERROMCP_NULL_ARGUMENT);
    sleep_ms(50);
    CHECK(atomic_load(&refused.called) == 0);
}

static void test_elicitation_timeout_and_cancel(ferromcp_client *client) {
    char *text = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_elicitation", "{\"message\":\"Who?\"}", 0,
                                           NULL, NULL, NULL, &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "action=accept");
    CHECK_CONTAINS(text, "ada@example.com");
    ferromcp_string_free(text);
    CHECK(atomic_load(&asked) == 1);

    /* The callback holds its answer longer than the call's timeout. */
    atomic_store(&hold_ms, 1500);
    text = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_elicitation", "{\"message\":\"slow\"}",
                                           300, NULL, NULL, NULL, &text),
                 FERROMCP_TIMEOUT);
    CHECK(text == NULL);
    wait_until_released();
    CHECK(atomic_load(&late_answer_status) == FERROMCP_REQUEST_CANCELLED);

    /* Cancelled from another thread while the callback holds its answer. */
    ferromcp_cancel_handle *cancel = NULL;
    CHECK_STATUS(ferromcp_cancel_handle_new(&cancel), FERROMCP_OK);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, fire_later, cancel) == 0);
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_elicitation", "{\"message\":\"slow\"}", 0,
                                           NULL, NULL, cancel, &text),
                 FERROMCP_REQUEST_CANCELLED);
    CHECK(text == NULL);
    pthread_join(thread, NULL);
    /* Once fired, it stays fired: a later call is cancelled at once. */
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_simple_text", NULL, 0, NULL, NULL,
                                           cancel, &text),
                 FERROMCP_REQUEST_CANCELLED);
    ferromcp_cancel_handle_free(cancel);
    wait_until_released();
    atomic_store(&hold_ms, 0);

    /* The connection still serves after the abandoned calls. */
    CHECK_STATUS(ferromcp_client_call_tool(client, "test_simple_text", NULL, 0, NULL, NULL, NULL,
                                           &text),
                 FERROMCP_OK);
    ferromcp_string_free(text);
}

/* The server answers task-capable tools with a task; the client follows it
 * to the tool's result, answering its question with the C callback. */
static void test_tasks(ferromcp_client *client) {
    char *text = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "slow_compute",
                                           "{\"seconds\":0.05,\"label\":\"c\"}", 0, NULL,
                                           NULL, NULL, &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "Computed c after 0.05 s");
    ferromcp_string_free(text);
    text = NULL;
    int before = atomic_load(&asked);
    CHECK_STATUS(ferromcp_client_call_tool(client, "confirm_delete", "{\"filename\":\"a.txt\"}",
                                           0, NULL, NULL, NULL, &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "Deleted a.txt");
    CHECK(atomic_load(&asked) == before + 1);
    ferromcp_string_free(text);
    text = NULL;
    /* A tool that fails as a tool inside its task: an isError result. */
    CHECK_STATUS(ferromcp_client_call_tool(client, "failing_job", NULL, 0, NULL, NULL, NULL,
                                           &text),
                 FERROMCP_OK);
    CHECK_CONTAINS(text, "\"isError\":true");
    ferromcp_string_free(text);
    text = NULL;
    /* A JSON-RPC error ends the task failed: the call's peer error. */
    CHECK_STATUS(ferromcp_client_call_tool(client, "protocol_error_job", NULL, 0, NULL, NULL,
                                           NULL, &text),
                 FERROMCP_PEER_ERROR);
    CHECK(ferromcp_last_error_code() == -32603);
    CHECK(text == NULL);
}

/* ---- task handles ---- */

static atomic_int status_changes = 0;
static char last_status[32];

static void on_status(void *userdata, const char *status, const char *state_json) {
    CHECK(userdata == (void *)&status_changes);
    CHECK_CONTAINS(state_json, "\"taskId\"");
    CHECK(strstr(state_json, status) != NULL);
    /* Each call a change: never the same status and message twice. */
    atomic_fetch_add(&status_changes, 1);
    snprintf(last_status, sizeof last_status, "%s", status);
}

static void wait_for_status(ferromcp_task *task, const char *wanted, char **out_state) {
    for (int i = 0; i < 500; i++) {
        char *state = NULL, *status = NULL;
        CHECK_STATUS(ferromcp_task_refresh(task, &state), FERROMCP_OK);
        CHECK_STATUS(ferromcp_json_get(state, "/status", &status), FERROMCP_OK);
        bool done = status != NULL && strcmp(status, wanted) == 0;
        ferromcp_string_free(status);
        if (done) {
            *out_state = state;
            return;
        }
        ferromcp_string_free(state);
        sleep_ms(10);
    }
    CHECK(!"the task never reached the status");
}

/* A handle on a task: its id, its state, answers given by the caller,
 * the result with a status callback, resumption by id, cancellation. */
static void test_task_handles(ferromcp_client *client) {
    ferromcp_task *task = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "confirm_delete",
                                                 "{\"filename\":\"b.txt\"}", 0, NULL, &task),
                 FERROMCP_OK);
    const char *id = ferromcp_task_id(task);
    CHECK(id != NULL && strlen(id) > 0);
    char *state = NULL;
    wait_for_status(task, "input_required", &state);
    CHECK_CONTAINS(state, "\"inputRequests\"");
    CHECK_CONTAINS(state, "elicitation/create");
    /* The question's key, answered by the caller itself. */
    char *requests = NULL;
    CHECK_STATUS(ferromcp_json_get(state, "/inputRequests", &requests), FERROMCP_OK);
    const char *open = strchr(requests, '"');
    const char *close = open ? strchr(open + 1, '"') : NULL;
    CHECK(open != NULL && close != NULL);
    char responses[256];
    snprintf(responses, sizeof responses,
             "{\"%.*s\":{\"action\":\"accept\",\"content\":{\"confirm\":true}}}",
             (int)(close - open - 1), open + 1);
    int before = atomic_load(&asked);
    CHECK_STATUS(ferromcp_task_respond(task, responses), FERROMCP_OK);
    ferromcp_string_free(requests);
    ferromcp_string_free(state);
    char *result = NULL;
    atomic_store(&status_changes, 0);
    CHECK_STATUS(ferromcp_task_result(task, 0, on_status, &status_changes, NULL, &result),
                 FERROMCP_OK);
    CHECK_CONTAINS(result, "Deleted b.txt");
    /* Answered by the caller: the input callback was not asked. */
    CHECK(atomic_load(&asked) == before);
    CHECK(atomic_load(&status_changes) >= 1);
    CHECK(strcmp(last_status, "completed") == 0);
    ferromcp_string_free(result);

    /* Resumed by id: the same task, completed. */
    ferromcp_task *again = NULL;
    CHECK_STATUS(ferromcp_client_tool_task(client, id, &again), FERROMCP_OK);
    CHECK(strcmp(ferromcp_task_id(again), id) == 0);
    wait_for_status(again, "completed", &state);
    CHECK_CONTAINS(state, "Deleted b.txt");
    ferromcp_string_free(state);
    ferromcp_task_free(again);
    ferromcp_task_free(task);

    /* Cancelled through the handle. */
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "slow_compute",
                                                 "{\"seconds\":30,\"label\":\"x\"}", 0, NULL,
                                                 &task),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_task_cancel(task), FERROMCP_OK);
    wait_for_status(task, "cancelled", &state);
    ferromcp_string_free(state);
    CHECK_STATUS(ferromcp_task_result(task, 0, NULL, NULL, NULL, &result),
                 FERROMCP_PROTOCOL_ERROR);
    ferromcp_task_free(task);

    /* A tool without task support answers at once: no id. */
    CHECK_STATUS(ferromcp_client_start_tool_task(client, "test_simple_text", NULL, 0, NULL, &task),
                 FERROMCP_OK);
    CHECK(ferromcp_task_id(task) == NULL);
    CHECK_STATUS(ferromcp_task_result(task, 0, NULL, NULL, NULL, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "\"content\"");
    ferromcp_string_free(result);
    CHECK_STATUS(ferromcp_task_respond(task, "{}"), FERROMCP_PROTOCOL_ERROR);
    ferromcp_task_free(task);
    ferromcp_task_free(NULL);
}

/* ---- skills ---- */

/* The everything-server publishes examples/skills: listed, loaded (checked
 * against the entry), their files read and checked. */
static void test_skills(ferromcp_client *client) {
    char *page = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_SKILLS, NULL, &page), FERROMCP_OK);
    CHECK_CONTAINS(page, "skill://pdf-processing/SKILL.md");
    char *entry = NULL;
    CHECK_STATUS(ferromcp_client_request(client, "skills/get",
                                         "{\"uri\":\"skill://pdf-processing/SKILL.md\"}", 0,
                                         NULL, NULL, NULL, &entry),
                 FERROMCP_OK);
    char *skill_json = NULL;
    CHECK_STATUS(ferromcp_json_get(entry, "/skill", &skill_json), FERROMCP_OK);
    ferromcp_skill *skill = NULL;
    /* By entry (no skills/get) and by URI. */
    CHECK_STATUS(ferromcp_client_load_skill(client, skill_json, &skill), FERROMCP_OK);
    CHECK_CONTAINS(ferromcp_skill_md(skill), "name: pdf-processing");
    char *held = NULL;
    CHECK_STATUS(ferromcp_skill_entry(skill, &held), FERROMCP_OK);
    CHECK_CONTAINS(held, "references/FORMS.md");
    ferromcp_string_free(held);
    uint8_t *data = NULL;
    size_t len = 0;
    CHECK_STATUS(ferromcp_skill_read(skill, "references/FORMS.md", &data, &len), FERROMCP_OK);
    CHECK(data != NULL && len > 0);
    ferromcp_bytes_free(data, len);
    data = NULL;
    CHECK_STATUS(ferromcp_skill_read(skill, "references/NOT-LISTED.md", &data, &len),
                 FERROMCP_PROTOCOL_ERROR);
    CHECK(data == NULL);
    ferromcp_skill_free(skill);
    skill = NULL;
    CHECK_STATUS(ferromcp_client_load_skill(client, "skill://pdf-processing/SKILL.md", &skill),
                 FERROMCP_OK);
    ferromcp_skill_free(skill);
    skill = NULL;
    /* An entry that does not match SKILL.md is refused. */
    CHECK_STATUS(ferromcp_client_load_skill(
                     client,
                     "{\"uri\":\"skill://pdf-processing/SKILL.md\","
                     "\"frontmatter\":{\"name\":\"pdf-processing\"},\"resources\":\"dynamic\"}",
                     &skill),
                 FERROMCP_PROTOCOL_ERROR);
    CHECK(skill == NULL);
    CHECK_STATUS(ferromcp_client_load_skill(client, "{not json", &skill), FERROMCP_INVALID_JSON);
    ferromcp_string_free(skill_json);
    ferromcp_string_free(entry);
    ferromcp_string_free(page);
    ferromcp_skill_free(NULL);
    ferromcp_bytes_free(NULL, 0);
}

int main(void) {
    test_options_are_checked();
    test_server_exit_is_connection_closed();

    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new("{\"name\":\"c-test\",\"version\":\"1.0.0\","
                                             "\"stderr\":\"null\"}",
                                             &options),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_client_options_on_input(options, FERROMCP_INPUT_ELICITATION, on_input,
                                                  &finalized, count_finalizer),
                 FERROMCP_OK);
    const char *args[] = {"--stdio", NULL};
    const char *env[] = {"RUST_LOG=error", NULL};
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_stdio(SERVER, args, env, ".", options, &client),
                 FERROMCP_OK);
    /* The client holds its own copy of the options. */
    ferromcp_client_options_free(options);
    CHECK(atomic_load(&finalized) == 0);
    if (client != NULL) {
        test_calls(client);
        test_listen(client);
        test_async(client);
        test_elicitation_timeout_and_cancel(client);
        test_tasks(client);
        test_task_handles(client);
        test_skills(client);
        ferromcp_client_free(client);
    }
    /* Released once the connection's last task ended: soon, not at once. */
    for (int i = 0; i < 500 && atomic_load(&finalized) == 0; i++) sleep_ms(10);
    CHECK(atomic_load(&finalized) == 1);
    return check_report("test_client");
}
