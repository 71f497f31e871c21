/* Two replicas of a C server on one real Redis (issue 29): the event bus,
 * the task store, the seal keys, the replica name and the health endpoints,
 * set through the C API's options JSON ("eventBus", "replica", "sealKeys",
 * "tasks":{"store"}; "health", "drainDelayMs" when serving HTTP).
 *
 * Usage: replicas_c REDIS_URL  (make test-scale starts redis-server, builds
 * this with -Wall -Wextra -Werror and runs it under valgrind).
 *
 *  1. a listen stream on replica 2 hears a resource update announced on
 *     replica 1;
 *  2. a task made on replica 1 is read and cancelled through replica 2, and
 *     its handler, on replica 1, sees the cancel;
 *  3. a legacy session opened on replica 1 has an id starting "c1.", and
 *     /healthz and /readyz answer;
 *  4. bad replica options are refused with FERROMCP_INVALID_JSON. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../../bindings-c/tests/check.h"
#include "../../bindings-c/tests/http_util.h"

#define WATCHED "mem://watched"
/* base64 of "scale-test-seal-key-of-32-bytes!": one key for both replicas. */
#define SEAL_KEY "c2NhbGUtdGVzdC1zZWFsLWtleS1vZi0zMi1ieXRlcyE="

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- a replica ---- */

struct replica {
    const char *name;
    ferromcp_server *server;
    pthread_t thread;
    ferromcp_status status;
    uint16_t port;
    char url[64];
    atomic_int cancelled;
};

static void watched(void *userdata, const char *uri, const char *variables, ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    (void)variables;
    CHECK_STATUS(ferromcp_call_respond(call, "\"watched\""), FERROMCP_OK);
}

/* A task that runs until cancelled, and flags it. */
static void wait_for_cancel(void *userdata, const char *args, size_t args_len, ferromcp_call *call) {
    (void)args;
    (void)args_len;
    struct replica *replica = userdata;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    for (int i = 0; i < 3000 && !ferromcp_context_is_cancelled(ctx); i++) {
        sleep_ms(10);
    }
    if (ferromcp_context_is_cancelled(ctx)) {
        atomic_store(&replica->cancelled, 1);
    }
    ferromcp_call_respond(call, "\"done\"");
}

static void *serve(void *arg) {
    struct replica *r = arg;
    r->status = ferromcp_server_serve_http_ex(r->server, "127.0.0.1", 0,
                                              "{\"health\":true,\"drainDelayMs\":100}");
    return NULL;
}

static bool start_replica(struct replica *r, const char *redis_url) {
    char options[512];
    snprintf(options, sizeof options,
             "{\"eventBus\":\"%s\",\"replica\":\"%s\",\"sealKeys\":[\"" SEAL_KEY "\"],"
             "\"tasks\":{\"store\":\"%s\"}}",
             redis_url, r->name, redis_url);
    CHECK_STATUS(ferromcp_server_new_with_options("replicated", "1.0.0", options, &r->server),
                 FERROMCP_OK);
    if (r->server == NULL) {
        return false;
    }
    CHECK_STATUS(ferromcp_server_add_resource(r->server, "{\"uri\":\"" WATCHED "\",\"name\":\"w\"}",
                                              NULL, watched, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(r->server, "wait", "runs until cancelled",
                                             "{\"type\":\"object\"}", NULL,
                                             FERROMCP_TOOL_TASK_OPTIONAL, wait_for_cancel, r, NULL),
                 FERROMCP_OK);
    r->status = FERROMCP_INTERNAL;
    if (pthread_create(&r->thread, NULL, serve, r) != 0) {
        CHECK(!"cannot start the serving thread");
        return false;
    }
    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(r->server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(port != 0);
    r->port = port;
    snprintf(r->url, sizeof r->url, "http://127.0.0.1:%u/mcp", (unsigned)port);
    return port != 0;
}

static void stop_replica(struct replica *r) {
    CHECK_STATUS(ferromcp_server_shutdown(r->server), FERROMCP_OK);
    pthread_join(r->thread, NULL);
    CHECK_STATUS(r->status, FERROMCP_OK);
    ferromcp_server_free(r->server);
}

/* ---- 1. a change crosses replicas ---- */

static atomic_int updates_heard = 0;

static void on_note(void *userdata, const char *method, const char *params) {
    (void)userdata;
    if (method != NULL && strcmp(method, "notifications/resources/updated") == 0 &&
        strstr(params, WATCHED) != NULL) {
        atomic_fetch_add(&updates_heard, 1);
    }
}

static void a_change_crosses_replicas(struct replica *a, struct replica *b) {
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_http(b->url, NULL, NULL, &client), FERROMCP_OK);
    ferromcp_listener *listener = NULL;
    CHECK_STATUS(ferromcp_client_listen(client, "{\"resourceSubscriptions\":[\"" WATCHED "\"]}",
                                        on_note, NULL, NULL, &listener),
                 FERROMCP_OK);
    /* The bus connects lazily: announce until B's stream hears it. */
    double deadline = now_s() + 15;
    while (atomic_load(&updates_heard) == 0 && now_s() < deadline) {
        CHECK_STATUS(ferromcp_server_notify_resource_updated(a->server, WATCHED), FERROMCP_OK);
        sleep_ms(200);
    }
    CHECK(atomic_load(&updates_heard) > 0);
    fprintf(stderr, "  heard %d update(s) on %s from %s\n", atomic_load(&updates_heard), b->name,
            a->name);
    ferromcp_listener_free(listener);
    ferromcp_client_free(client);
}

/* ---- 2. a task shared by replicas ---- */

static bool status_is(const char *state, const char *status) {
    char wanted[64];
    snprintf(wanted, sizeof wanted, "\"status\":\"%s\"", status);
    return state != NULL && strstr(state, wanted) != NULL;
}

static void a_task_is_shared(struct replica *a, struct replica *b) {
    const char *options = "{\"name\":\"c-replicas\",\"version\":\"1.0.0\",\"timeoutMs\":20000}";
    ferromcp_client_options *client_options = NULL;
    CHECK_STATUS(ferromcp_client_options_new(options, &client_options), FERROMCP_OK);
    ferromcp_client *on_a = NULL, *on_b = NULL;
    CHECK_STATUS(ferromcp_client_connect_http(a->url, NULL, client_options, &on_a), FERROMCP_OK);
    CHECK_STATUS(ferromcp_client_connect_http(b->url, NULL, client_options, &on_b), FERROMCP_OK);
    ferromcp_client_options_free(client_options);
    ferromcp_task *started = NULL, *through_b = NULL;
    CHECK_STATUS(ferromcp_client_start_tool_task(on_a, "wait", NULL, 0, NULL, &started),
                 FERROMCP_OK);
    const char *id = started != NULL ? ferromcp_task_id(started) : NULL;
    CHECK(id != NULL);
    if (id != NULL) {
        CHECK_STATUS(ferromcp_client_tool_task(on_b, id, &through_b), FERROMCP_OK);
        char *state = NULL;
        CHECK_STATUS(ferromcp_task_refresh(through_b, &state), FERROMCP_OK);
        CHECK(status_is(state, "working"));
        ferromcp_string_free(state);
        CHECK_STATUS(ferromcp_task_cancel(through_b), FERROMCP_OK);
        double deadline = now_s() + 15;
        while (!atomic_load(&a->cancelled) && now_s() < deadline) {
            sleep_ms(20);
        }
        CHECK(atomic_load(&a->cancelled));
        CHECK(!atomic_load(&b->cancelled));
        bool cancelled = false;
        while (!cancelled && now_s() < deadline) {
            state = NULL;
            CHECK_STATUS(ferromcp_task_refresh(through_b, &state), FERROMCP_OK);
            cancelled = status_is(state, "cancelled");
            ferromcp_string_free(state);
            sleep_ms(20);
        }
        CHECK(cancelled);
    }
    ferromcp_task_free(through_b);
    ferromcp_task_free(started);
    ferromcp_client_free(on_a);
    ferromcp_client_free(on_b);
}

/* ---- 3. the replica's name and its health ---- */

static void names_and_health(struct replica *a) {
    const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
                       "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
                       "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";
    char request[1024];
    int n = snprintf(request, sizeof request,
                     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     (unsigned)a->port, strlen(body), body);
    char *response = http_exchange(a->port, request, (size_t)n);
    CHECK(response != NULL && strstr(response, "mcp-session-id: c1.") != NULL);
    free(response);
    const char *paths[] = {"/healthz", "/readyz"};
    const char *answers[] = {"{\"status\":\"ok\"}", "{\"status\":\"ready\"}"};
    for (int i = 0; i < 2; i++) {
        n = snprintf(request, sizeof request,
                     "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", paths[i]);
        response = http_exchange(a->port, request, (size_t)n);
        CHECK(response != NULL && strncmp(response, "HTTP/1.1 200", 12) == 0 &&
              strstr(response, answers[i]) != NULL);
        free(response);
    }
}

/* ---- 4. bad options ---- */

static void bad_options_are_refused(void) {
    const char *bad[] = {"{\"replica\":\"c1.bad\"}", "{\"replica\":5}",
                         "{\"eventBus\":\"kafka://nowhere\"}", "{\"tasks\":{\"store\":7}}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ferromcp_server *server = NULL;
        CHECK_STATUS(ferromcp_server_new_with_options("x", "1", bad[i], &server),
                     FERROMCP_INVALID_JSON);
        CHECK(server == NULL);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: replicas_c REDIS_URL\n");
        return 2;
    }
    struct replica a = {.name = "c1"}, b = {.name = "c2"};
    if (start_replica(&a, argv[1]) && start_replica(&b, argv[1])) {
        a_change_crosses_replicas(&a, &b);
        a_task_is_shared(&a, &b);
        names_and_health(&a);
    }
    bad_options_are_refused();
    if (a.server != NULL) {
        stop_replica(&a);
    }
    if (b.server != NULL) {
        stop_replica(&b);
    }
    /* A freed server's Redis connections close on the runtime's threads,
     * after ferromcp_server_free() returned: let them finish, so valgrind
     * does not find their buffers still held at exit. */
    sleep_ms(500);
    return check_report("replicas_c");
}
