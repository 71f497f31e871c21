/* The C server surface end to end over Streamable HTTP: resources, resource
 * templates, prompts and completion registered from C; callbacks that fail
 * (the server keeps serving), that answer later from another thread, and
 * that ask the client for input with the same code under 2026-07-28 (an
 * input_required round, then the retry carrying the answer) and in a
 * 2025-11-25 session (a live elicitation/create request answered over a
 * second connection). Run under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "check.h"
#include "http_util.h"

static atomic_int finalized = 0;
static atomic_int cancel_hook_called = 0;
static atomic_int cancel_hook_freed = 0;
static atomic_int ask_status_nonblocking = -1;

static void count_finalizer(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&finalized, 1);
}

static void on_cancel(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&cancel_hook_called, 1);
}

static void on_cancel_free(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&cancel_hook_freed, 1);
}

/* ---- callbacks ---- */

static atomic_int waiter_cancel_seen = 0;
static atomic_int waiter_freed = 0;

static void waiter_on_cancel(void *userdata) {
    (void)userdata;
    atomic_store(&waiter_cancel_seen, 1);
}

static void waiter_free(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&waiter_freed, 1);
}

/* Waits (up to 10 s) for its cancellation callback, then completes the
 * call anyway (the result is discarded: nobody waits any more). */
static void wait_for_cancel(void *userdata, const char *args, size_t len, ferromcp_call *call) {
    (void)userdata;
    (void)args;
    (void)len;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    CHECK_STATUS(ferromcp_context_on_cancel(ctx, waiter_on_cancel, NULL, waiter_free),
                 FERROMCP_OK);
    for (int i = 0; i < 500 && !atomic_load(&waiter_cancel_seen); i++) {
        sleep_ms(20);
    }
    CHECK(ferromcp_context_is_cancelled(ctx));
    CHECK_STATUS(ferromcp_call_respond(call, "\"too late\""), FERROMCP_REQUEST_CANCELLED);
}

/* The one asking callback: elicits a name under key "user_name". Under
 * 2026-07-28 the first round gives FERROMCP_INPUT_REQUIRED, the retry the
 * answer; in a 2025-11-25 session the call blocks until the client answers. */
static void ask_name(void *userdata, const char *args, size_t len, ferromcp_call *call) {
    (void)userdata;
    (void)args;
    (void)len;
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(
        ferromcp_call_context(call), "user_name", "What is your name?",
        "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}", &answer);
    if (status == FERROMCP_INPUT_REQUIRED) {
        ferromcp_call_fail(call, "waiting for input");
        return;
    }
    if (status != FERROMCP_OK) {
        ferromcp_call_fail(call, ferromcp_last_error_message());
        return;
    }
    char *name = NULL;
    char text[160];
    CHECK_STATUS(ferromcp_json_get(answer, "/content/name", &name), FERROMCP_OK);
    snprintf(text, sizeof text, "\"Hello, %s!\"", name ? name : "?");
    ferromcp_string_free(name);
    ferromcp_string_free(answer);
    CHECK_STATUS(ferromcp_call_respond(call, text), FERROMCP_OK);
}

/* Registered FERROMCP_TOOL_NONBLOCKING: asking would block a runtime thread. */
static void ask_nonblocking(void *userdata, const char *args, size_t len, ferromcp_call *call) {
    (void)userdata;
    (void)args;
    (void)len;
    char *answer = NULL;
    atomic_store(&ask_status_nonblocking,
                 (int)ferromcp_context_list_roots(ferromcp_call_context(call), NULL, &answer));
    ferromcp_call_respond(call, "\"refused\"");
}

/* What the context tells about the request. */
static void facts(void *userdata, const char *args, size_t len, ferromcp_call *call) {
    (void)userdata;
    (void)args;
    (void)len;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    char *version = NULL;
    char *header = NULL;
    char *missing = NULL;
    char *capabilities = NULL;
    CHECK_STATUS(ferromcp_context_protocol_version(ctx, &version), FERROMCP_OK);
    CHECK_STATUS(ferromcp_context_http_header(ctx, "MCP-NAME", &header), FERROMCP_OK);
    CHECK_STATUS(ferromcp_context_http_header(ctx, "x-absent", &missing), FERROMCP_NOT_FOUND);
    CHECK(missing == NULL);
    CHECK_STATUS(ferromcp_context_client_capabilities_json(ctx, &capabilities), FERROMCP_OK);
    CHECK(!ferromcp_context_is_cancelled(ctx));
    char text[256];
    snprintf(text, sizeof text, "\"version=%s header=%s caps=%s\"", version ? version : "",
             header ? header : "", capabilities && strcmp(capabilities, "{}") == 0 ? "{}" : "?");
    ferromcp_string_free(version);
    ferromcp_string_free(header);
    ferromcp_string_free(capabilities);
    CHECK_STATUS(ferromcp_call_respond(call, text), FERROMCP_OK);
}

static void text_resource(void *userdata, const char *uri, const char *variables,
                          ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    CHECK(strcmp(variables, "{}") == 0);
    CHECK_STATUS(ferromcp_call_respond(call, "\"plain text\""), FERROMCP_OK);
}

static void failing_resource(void *userdata, const char *uri, const char *variables,
                             ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    (void)variables;
    CHECK_STATUS(ferromcp_call_fail(call, "the disk is on fire"), FERROMCP_OK);
}

static pthread_t later_thread;
static atomic_int later_started = 0;

struct later_job {
    ferromcp_call *call;
    char id[32];
};

static void *answer_later(void *arg) {
    struct later_job *job = arg;
    char text[128];
    sleep_ms(50);
    snprintf(text, sizeof text, "{\"uri\":\"test://item/%s\",\"text\":\"item %s, later\"}",
             job->id, job->id);
    CHECK_STATUS(ferromcp_call_respond(job->call, text), FERROMCP_OK);
    free(job);
    return NULL;
}

/* A template read answered 50 ms later from a thread of its own, with a
 * cancellation hook that must not fire (the call completes first). */
static void item_later(void *userdata, const char *uri, const char *variables,
                       ferromcp_call *call) {
    (void)userdata;
    CHECK(strncmp(uri, "test://item/", 12) == 0);
    struct later_job *job = calloc(1, sizeof *job);
    char *id = NULL;
    if (job == NULL || ferromcp_json_get(variables, "/id", &id) != FERROMCP_OK) {
        free(job);
        ferromcp_call_fail(call, "no id");
        return;
    }
    snprintf(job->id, sizeof job->id, "%s", id);
    ferromcp_string_free(id);
    job->call = call;
    CHECK_STATUS(ferromcp_context_on_cancel(ferromcp_call_context(call), on_cancel, NULL,
                                            on_cancel_free),
                 FERROMCP_OK);
    /* Joined by main, so valgrind sees the thread gone before exit. */
    if (pthread_create(&later_thread, NULL, answer_later, job) != 0) {
        free(job);
        ferromcp_call_fail(call, "no thread");
        return;
    }
    atomic_store(&later_started, 1);
}

static void greet_prompt(void *userdata, const char *arguments, ferromcp_call *call) {
    (void)userdata;
    char *who = NULL;
    char text[160];
    CHECK_STATUS(ferromcp_json_get(arguments, "/who", &who), FERROMCP_OK);
    snprintf(text, sizeof text, "\"Say hello to %s\"", who ? who : "?");
    ferromcp_string_free(who);
    CHECK_STATUS(ferromcp_call_respond(call, text), FERROMCP_OK);
}

static void failing_prompt(void *userdata, const char *arguments, ferromcp_call *call) {
    (void)userdata;
    (void)arguments;
    CHECK_STATUS(ferromcp_call_fail_jsonrpc(call, -32602, "unknown mood", "{\"mood\":\"x\"}"),
                 FERROMCP_OK);
}

static void complete(void *userdata, const char *params, ferromcp_call *call) {
    (void)userdata;
    char *value = NULL;
    CHECK_STATUS(ferromcp_json_get(params, "/argument/value", &value), FERROMCP_OK);
    bool match = value != NULL && strncmp("world", value, strlen(value)) == 0;
    ferromcp_string_free(value);
    CHECK_STATUS(ferromcp_call_respond(call, match ? "[\"world\"]" : "[]"), FERROMCP_OK);
}

/* ---- a minimal HTTP client (the connection: http_util.h) ---- */

/* Opens a connection and sends one POST; returns the socket or -1. */
static int send_post(uint16_t port, const char *version, const char *session, const char *method,
                     const char *name, const char *body) {
    char extra[256] = "";
    if (session != NULL) {
        snprintf(extra, sizeof extra, "Mcp-Session-Id: %s\r\n", session);
    } else if (name != NULL) {
        snprintf(extra, sizeof extra, "Mcp-Method: %s\r\nMcp-Name: %s\r\n", method, name);
    } else {
        snprintf(extra, sizeof extra, "Mcp-Method: %s\r\n", method);
    }
    size_t size = strlen(body) + 1024;
    char *request = malloc(size);
    if (request == NULL) {
        return -1;
    }
    int len = snprintf(request, size,
                       "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n"
                       "Content-Type: application/json\r\n"
                       "Accept: application/json, text/event-stream\r\n"
                       "MCP-Protocol-Version: %s\r\n%sContent-Length: %zu\r\n"
                       "Connection: close\r\n\r\n%s",
                       (unsigned)port, version, extra, strlen(body), body);
    int fd = http_connect(port);
    for (int sent = 0; fd >= 0 && sent < len;) {
        ssize_t n = write(fd, request + sent, (size_t)(len - sent));
        if (n <= 0) {
            close(fd);
            fd = -1;
            break;
        }
        sent += (int)n;
    }
    free(request);
    return fd;
}

/* Reads from `fd` until `needle` appears (NULL: until end of stream);
 * appends to *buffer (malloc'd, NUL-terminated). Returns whether found. */
static bool read_until(int fd, char **buffer, size_t *used, const char *needle) {
    size_t capacity = *buffer == NULL ? 0 : *used + 1;
    for (;;) {
        if (*buffer != NULL && needle != NULL && strstr(*buffer, needle) != NULL) {
            return true;
        }
        if (*used + 4096 + 1 > capacity) {
            capacity = *used + 8192;
            char *bigger = realloc(*buffer, capacity);
            if (bigger == NULL) {
                return false;
            }
            *buffer = bigger;
        }
        ssize_t n = read(fd, *buffer + *used, 4096);
        if (n <= 0) {
            (*buffer)[*used] = '\0';
            return needle == NULL;
        }
        *used += (size_t)n;
        (*buffer)[*used] = '\0';
    }
}

/* One POST, the whole response. */
static char *post(uint16_t port, const char *version, const char *session, const char *method,
                  const char *name, const char *body) {
    int fd = send_post(port, version, session, method, name, body);
    if (fd < 0) {
        return NULL;
    }
    char *response = NULL;
    size_t used = 0;
    read_until(fd, &response, &used, NULL);
    close(fd);
    return response;
}

/* The JSON-RPC message in `response` (a JSON body or an SSE data line) that
 * contains `needle`, copied (malloc'd), or NULL. */
static char *message_with(const char *response, const char *needle) {
    const char *at = response == NULL ? NULL : strstr(response, needle);
    if (at == NULL) {
        return NULL;
    }
    const char *start = at;
    while (start > response && start[-1] != '\n') {
        start--;
    }
    if (strncmp(start, "data: ", 6) == 0) {
        start += 6;
    } else if (strncmp(start, "data:", 5) == 0) {
        start += 5;
    }
    const char *end = at;
    while (*end != '\0' && *end != '\n' && *end != '\r') {
        end++;
    }
    char *copy = malloc((size_t)(end - start) + 1);
    if (copy != NULL) {
        memcpy(copy, start, (size_t)(end - start));
        copy[end - start] = '\0';
    }
    return copy;
}

#define META_2026(caps)                                                                \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","           \
    "\"io.modelcontextprotocol/clientCapabilities\":" caps ","                          \
    "\"io.modelcontextprotocol/clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}"

static char *post_2026(uint16_t port, const char *method, const char *name, const char *params) {
    char body[2048];
    snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"%s\",\"params\":%s}",
             method, params);
    return post(port, "2026-07-28", NULL, method, name, body);
}

/* ---- the scenarios ---- */

static void elicit_over_2026(uint16_t port) {
    char *r = post_2026(port, "tools/call", "ask_name",
                        "{\"name\":\"ask_name\",\"arguments\":{}," META_2026(
                            "{\"elicitation\":{}}") "}");
    CHECK_CONTAINS(r, "\"resultType\":\"input_required\"");
    CHECK_CONTAINS(r, "\"user_name\":{\"method\":\"elicitation/create\"");
    char *message = message_with(r, "\"requestState\"");
    char *state = NULL;
    CHECK(message != NULL);
    if (message != NULL) {
        CHECK_STATUS(ferromcp_json_get(message, "/result/requestState", &state), FERROMCP_OK);
    }
    free(message);
    free(r);
    if (state == NULL) {
        return;
    }
    char params[1024];
    snprintf(params, sizeof params,
             "{\"name\":\"ask_name\",\"arguments\":{},\"inputResponses\":{\"user_name\":"
             "{\"action\":\"accept\",\"content\":{\"name\":\"Alice\"}}},\"requestState\":\"%s\","
             META_2026("{\"elicitation\":{}}") "}",
             state);
    ferromcp_string_free(state);
    r = post_2026(port, "tools/call", "ask_name", params);
    CHECK_CONTAINS(r, "Hello, Alice!");
    CHECK(r == NULL || strstr(r, "\"isError\":true") == NULL);
    free(r);
}

static void elicit_over_2025(uint16_t port) {
    const char *v = "2025-11-25";
    char *r = post(port, v, NULL, "initialize", NULL,
                   "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                   "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"elicitation\":{}},"
                   "\"clientInfo\":{\"name\":\"test\",\"version\":\"1\"}}}");
    CHECK_CONTAINS(r, "\"protocolVersion\":\"2025-11-25\"");
    char session[128] = "";
    const char *header = r == NULL ? NULL : strstr(r, "mcp-session-id: ");
    if (header == NULL && r != NULL) {
        header = strstr(r, "Mcp-Session-Id: ");
    }
    if (header != NULL) {
        sscanf(header + 16, "%127[^\r\n]", session);
    }
    free(r);
    CHECK(session[0] != '\0');
    if (session[0] == '\0') {
        return;
    }
    free(post(port, v, session, "notifications/initialized", NULL,
              "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));

    /* The call's stream carries the server's elicitation/create request. */
    int call_fd = send_post(port, v, session, "tools/call", NULL,
                            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
                            "{\"name\":\"ask_name\",\"arguments\":{}}}");
    CHECK(call_fd >= 0);
    if (call_fd < 0) {
        return;
    }
    char *stream = NULL;
    size_t used = 0;
    CHECK(read_until(call_fd, &stream, &used, "elicitation/create"));
    char *request = message_with(stream, "\"elicitation/create\"");
    char *id = NULL;
    if (request != NULL) {
        CHECK_STATUS(ferromcp_json_get(request, "/id", &id), FERROMCP_OK);
    }
    free(request);
    if (id != NULL) {
        char answer[512];
        /* A numeric id comes back as its JSON text, a string id unquoted. */
        bool numeric = id[0] == '-' || (id[0] >= '0' && id[0] <= '9');
        snprintf(answer, sizeof answer,
                 "{\"jsonrpc\":\"2.0\",\"id\":%s%s%s,\"result\":{\"action\":\"accept\","
                 "\"content\":{\"name\":\"Bob\"}}}",
                 numeric ? "" : "\"", id, numeric ? "" : "\"");
        ferromcp_string_free(id);
        r = post(port, v, session, "", NULL, answer);
        CHECK_CONTAINS(r, "HTTP/1.1 202");
        free(r);
    }
    read_until(call_fd, &stream, &used, "Hello, Bob!");
    close(call_fd);
    CHECK_CONTAINS(stream, "Hello, Bob!");
    free(stream);
}

struct serve_job {
    ferromcp_server *server;
    ferromcp_status status;
};

static void *serve(void *arg) {
    struct serve_job *job = arg;
    /* A short first-byte deadline, so that the silent connection below is
     * closed soon (the requests of this test are sent whole at once). */
    job->status = ferromcp_server_serve_http_ex(
        job->server, "127.0.0.1", 0,
        "{\"path\":\"/mcp\",\"allowedOrigins\":[],"
        "\"limits\":{\"headerReadTimeout\":1,\"idleTimeout\":3600}}");
    return NULL;
}

int main(void) {
    ferromcp_server *server = NULL;
    /* A misspelt option is refused, not ignored. */
    CHECK_STATUS(ferromcp_server_new_with_options("t", "1", "{\"pagesize\":2}", &server),
                 FERROMCP_INVALID_JSON);
    CHECK(server == NULL);
    CHECK_STATUS(ferromcp_server_new_with_options(
                     "server-test", "0.1.0",
                     "{\"instructions\":\"Be nice.\",\"pageSize\":2,\"sealKey\":\"k\"}", &server),
                 FERROMCP_OK);
    if (server == NULL) {
        return check_report("test_server");
    }
    CHECK_STATUS(ferromcp_server_add_tool_json(
                     server,
                     "{\"name\":\"ask_name\",\"title\":\"Ask a name\",\"inputSchema\":"
                     "{\"type\":\"object\"},\"annotations\":{\"readOnlyHint\":true}}",
                     0, ask_name, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_json(
                     server, "{\"name\":\"ask_nonblocking\",\"inputSchema\":{\"type\":\"object\"}}",
                     FERROMCP_TOOL_NONBLOCKING, ask_nonblocking, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_json(
                     server, "{\"name\":\"wait_for_cancel\",\"inputSchema\":{\"type\":\"object\"}}",
                     0, wait_for_cancel, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_json(
                     server, "{\"name\":\"facts\",\"inputSchema\":{\"type\":\"object\"}}", 0,
                     facts, NULL, count_finalizer),
                 FERROMCP_OK);
    /* Task flags that contradict each other, or a start without support:
     * refused, and the userdata stays ours. */
    CHECK_STATUS(ferromcp_server_add_tool_json(
                     server, "{\"name\":\"both\",\"inputSchema\":{\"type\":\"object\"}}",
                     FERROMCP_TOOL_TASK_OPTIONAL | FERROMCP_TOOL_TASK_REQUIRED, facts, NULL,
                     count_finalizer),
                 FERROMCP_INVALID_ARGUMENT);
    CHECK_CONTAINS(ferromcp_last_error_message(), "exclude each other");
    CHECK_STATUS(ferromcp_server_add_tool_json(
                     server, "{\"name\":\"later\",\"inputSchema\":{\"type\":\"object\"}}",
                     FERROMCP_TOOL_TASK_BY_CALLBACK, facts, NULL, count_finalizer),
                 FERROMCP_INVALID_ARGUMENT);
    CHECK_STATUS(ferromcp_server_add_tool_json(
                     server, "{\"name\":\"odd\",\"inputSchema\":{\"type\":\"object\"}}", 16,
                     facts, NULL, count_finalizer),
                 FERROMCP_INVALID_ARGUMENT);
    /* Skills from a directory: the published SKILL.md URIs; a directory
     * that is not there names itself. */
    char *skills = NULL;
    CHECK_STATUS(ferromcp_server_add_skills_dir(server, "examples/skills", &skills), FERROMCP_OK);
    CHECK_CONTAINS(skills, "\"skill://pdf-processing/SKILL.md\"");
    CHECK_CONTAINS(skills, "\"skill://acme/billing/refunds/SKILL.md\"");
    ferromcp_string_free(skills);
    CHECK_STATUS(ferromcp_server_add_skills_dir(server, "no/such/dir", NULL),
                 FERROMCP_INVALID_DEFINITION);
    CHECK_CONTAINS(ferromcp_last_error_message(), "no/such/dir");
    /* A definition that is not a Tool: refused, and the userdata stays ours. */
    CHECK_STATUS(ferromcp_server_add_tool_json(server, "{\"title\":\"no name\"}", 0, facts, NULL,
                                               count_finalizer),
                 FERROMCP_INVALID_DEFINITION);
    CHECK_STATUS(ferromcp_server_add_resource(
                     server, "{\"uri\":\"test://text\",\"name\":\"text\",\"mimeType\":\"text/plain\"}",
                     "{\"ttlMs\":60000,\"cacheScope\":\"private\"}", text_resource, NULL,
                     count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_resource(server, "{\"uri\":\"test://broken\",\"name\":\"b\"}",
                                              NULL, failing_resource, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_resource_template(
                     server, "{\"uriTemplate\":\"test://item/{id}\",\"name\":\"item\"}", NULL,
                     item_later, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_prompt(
                     server,
                     "{\"name\":\"greet\",\"title\":\"Greet\",\"arguments\":[{\"name\":\"who\","
                     "\"required\":true}]}",
                     greet_prompt, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_prompt(server, "{\"name\":\"moody\"}", failing_prompt, NULL,
                                            count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_set_completion(server, complete, NULL, count_finalizer),
                 FERROMCP_OK);
    /* Removing: once, then it is gone (its finalizer runs: 9 registered so far). */
    CHECK_STATUS(ferromcp_server_remove_prompt(server, "moody"), FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_remove_prompt(server, "moody"), FERROMCP_NOT_FOUND);
    CHECK(atomic_load(&finalized) == 1);
    CHECK_STATUS(ferromcp_server_add_prompt(server, "{\"name\":\"moody\"}", failing_prompt, NULL,
                                            count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_notify_resource_updated(server, "test://text"), FERROMCP_OK);

    /* Bad limits are refused, naming the member. */
    CHECK_STATUS(ferromcp_server_serve_http_ex(server, "127.0.0.1", 0,
                                               "{\"limits\":{\"idleTimeout\":0}}"),
                 FERROMCP_INVALID_JSON);
    CHECK_CONTAINS(ferromcp_last_error_message(), "\"idleTimeout\" must be a positive number");
    CHECK_STATUS(ferromcp_server_serve_http_ex(server, "127.0.0.1", 0,
                                               "{\"limits\":{\"maxConections\":5}}"),
                 FERROMCP_INVALID_JSON);
    CHECK_CONTAINS(ferromcp_last_error_message(), "unknown HTTP limit \"maxConections\"");

    struct serve_job job = {server, FERROMCP_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve, &job) == 0);
    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(port != 0);

    /* The limits apply: a connection that sends nothing is closed at the
     * header timeout (1 s), not the idle one (an hour). */
    {
        int silent = http_connect(port);
        CHECK(silent >= 0);
        if (silent >= 0) {
            struct timeval wait = {30, 0};
            setsockopt(silent, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
            char byte;
            CHECK(read(silent, &byte, 1) == 0);
            close(silent);
        }
    }

    char *r = post_2026(port, "tools/call", "facts",
                        "{\"name\":\"facts\",\"arguments\":{}," META_2026("{}") "}");
    CHECK_CONTAINS(r, "version=2026-07-28 header=facts caps={}");
    free(r);

    r = post_2026(port, "tools/list", NULL, "{" META_2026("{}") "}");
    CHECK_CONTAINS(r, "\"title\":\"Ask a name\"");
    CHECK_CONTAINS(r, "\"readOnlyHint\":true");
    CHECK_CONTAINS(r, "\"nextCursor\""); /* pageSize 2, three tools */
    free(r);

    r = post_2026(port, "resources/read", "test://broken",
                  "{\"uri\":\"test://broken\"," META_2026("{}") "}");
    CHECK_CONTAINS(r, "\"error\":{");
    CHECK_CONTAINS(r, "the disk is on fire");
    free(r);

    /* Still serving after a failure. */
    r = post_2026(port, "resources/read", "test://text",
                  "{\"uri\":\"test://text\"," META_2026("{}") "}");
    CHECK_CONTAINS(r, "\"text\":\"plain text\"");
    CHECK_CONTAINS(r, "\"cacheScope\":\"private\"");
    free(r);

    r = post_2026(port, "resources/read", "test://item/42",
                  "{\"uri\":\"test://item/42\"," META_2026("{}") "}");
    CHECK_CONTAINS(r, "\"text\":\"item 42, later\"");
    free(r);
    CHECK(atomic_load(&later_started) == 1);
    if (atomic_load(&later_started) == 1) {
        pthread_join(later_thread, NULL);
    }

    r = post_2026(port, "prompts/get", "greet",
                  "{\"name\":\"greet\",\"arguments\":{\"who\":\"Ada\"}," META_2026("{}") "}");
    CHECK_CONTAINS(r, "Say hello to Ada");
    free(r);

    r = post_2026(port, "prompts/get", "moody",
                  "{\"name\":\"moody\",\"arguments\":{}," META_2026("{}") "}");
    CHECK_CONTAINS(r, "\"code\":-32602");
    CHECK_CONTAINS(r, "\"data\":{\"mood\":\"x\"}");
    free(r);

    r = post_2026(port, "completion/complete", NULL,
                  "{\"ref\":{\"type\":\"ref/prompt\",\"name\":\"greet\"},"
                  "\"argument\":{\"name\":\"who\",\"value\":\"wo\"}," META_2026("{}") "}");
    CHECK_CONTAINS(r, "\"values\":[\"world\"]");
    free(r);

    r = post_2026(port, "tools/call", "ask_nonblocking",
                  "{\"name\":\"ask_nonblocking\",\"arguments\":{}," META_2026("{\"roots\":{}}") "}");
    CHECK_CONTAINS(r, "refused");
    free(r);
    CHECK(atomic_load(&ask_status_nonblocking) == FERROMCP_INVALID_STATE);

    elicit_over_2026(port);
    elicit_over_2025(port);

    /* The client goes away mid-call: the cancellation callback runs (once,
     * then its finalizer), and the callback's late answer is discarded. */
    int fd = send_post(port, "2026-07-28", NULL, "tools/call", "wait_for_cancel",
                       "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":"
                       "{\"name\":\"wait_for_cancel\",\"arguments\":{}," META_2026("{}") "}}");
    CHECK(fd >= 0);
    sleep_ms(200);
    if (fd >= 0) {
        close(fd);
    }
    for (int i = 0; i < 250 && atomic_load(&waiter_freed) == 0; i++) {
        sleep_ms(20);
    }
    CHECK(atomic_load(&waiter_cancel_seen) == 1);
    CHECK(atomic_load(&waiter_freed) == 1);

    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    pthread_join(thread, NULL);
    CHECK_STATUS(job.status, FERROMCP_OK);
    ferromcp_server_free(server);

    /* 11 registrations (the removed prompt counted once): each finalizer
     * runs exactly once; the cancellation hook was freed, never called. */
    for (int i = 0; i < 250 && atomic_load(&finalized) < 11; i++) {
        sleep_ms(20);
    }
    CHECK(atomic_load(&finalized) == 11);
    CHECK(atomic_load(&cancel_hook_called) == 0);
    CHECK(atomic_load(&cancel_hook_freed) == 1);
    sleep_ms(100);
    CHECK(atomic_load(&finalized) == 11);
    return check_report("test_server");
}
