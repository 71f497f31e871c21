/* Gateway mounting from C (ferromcp_server_mount_server(),
 * ferromcp_server_mount_client(), ferromcp_mount_unmount(),
 * ferromcp_mount_free()): a server mounted under "alpha" answers
 * `alpha_echo` to a client of the outer server (served over HTTP on a free
 * port); a bad prefix is refused with FERROMCP_INVALID_ARGUMENT before
 * anything is mounted; an upstream reached through a ferromcp_client is
 * mounted under "beta"; unmounting takes the tool out; a mount left in place
 * goes with its server; every finalizer runs exactly once. Run from the
 * repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "check.h"

static atomic_int finalized = 0;

static void count_finalizer(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&finalized, 1);
}

/* Answers "<userdata>: <text>": which upstream answered, and what it got. */
static void echo(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)arguments_len;
    char *text = NULL;
    CHECK_STATUS(ferromcp_json_get(arguments_json, "/text", &text), FERROMCP_OK);
    char answer[256];
    snprintf(answer, sizeof answer, "\"%s: %s\"", (const char *)userdata,
             text != NULL ? text : "");
    ferromcp_string_free(text);
    CHECK_STATUS(ferromcp_call_respond(call, answer), FERROMCP_OK);
}

static ferromcp_server *upstream_server(const char *name) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new(name, "1.0.0", &server), FERROMCP_OK);
    if (server != NULL) {
        CHECK_STATUS(ferromcp_server_add_tool(
                         server, "echo", "Echoes its text",
                         "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}}}",
                         NULL, echo, (void *)name, count_finalizer),
                     FERROMCP_OK);
    }
    return server;
}

/* ---- serving over HTTP from a thread of the test's own ---- */

struct serving {
    ferromcp_server *server;
    ferromcp_status status;
    pthread_t thread;
    uint16_t port;
};

static void *serve(void *arg) {
    struct serving *s = arg;
    s->status = ferromcp_server_serve_http(s->server, "127.0.0.1", 0);
    return NULL;
}

static void start(struct serving *s, ferromcp_server *server) {
    s->server = server;
    s->status = FERROMCP_INTERNAL;
    s->port = 0;
    CHECK(pthread_create(&s->thread, NULL, serve, s) == 0);
    for (int i = 0; i < 500 && ferromcp_server_http_port(server, &s->port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(s->port != 0);
}

static void stop(struct serving *s) {
    CHECK_STATUS(ferromcp_server_shutdown(s->server), FERROMCP_OK);
    pthread_join(s->thread, NULL);
    CHECK_STATUS(s->status, FERROMCP_OK);
}

static ferromcp_client *connect_to(uint16_t port) {
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", (unsigned)port);
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_http(url, NULL, NULL, &client), FERROMCP_OK);
    return client;
}

/* The text of `tool`'s result, called with {"text": "hi"}, or NULL when
 * the call fails with `expected` (checked). Free it with
 * ferromcp_string_free(). */
static char *call_echo(ferromcp_client *client, const char *tool, ferromcp_status expected) {
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, tool, "{\"text\":\"hi\"}", 10000, NULL, NULL,
                                          NULL, &result),
                 expected);
    if (result == NULL) {
        return NULL;
    }
    CHECK(strstr(result, "\"isError\":true") == NULL);
    char *text = NULL;
    CHECK_STATUS(ferromcp_json_get(result, "/content/0/text", &text), FERROMCP_OK);
    ferromcp_string_free(result);
    return text;
}

static char *tool_list(ferromcp_client *client) {
    char *list = NULL;
    CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &list), FERROMCP_OK);
    return list;
}

/* (b) Bad arguments are refused before anything is mounted. */
static void test_bad_arguments(ferromcp_server *gateway, ferromcp_server *alpha) {
    ferromcp_mount *mount = NULL;
    CHECK_STATUS(ferromcp_server_mount_server(gateway, "a b", alpha, &mount),
                 FERROMCP_INVALID_DEFINITION);
    CHECK_CONTAINS(ferromcp_last_error_message(), "invalid mount prefix");
    CHECK_STATUS(ferromcp_server_mount_server(gateway, "1st", alpha, &mount),
                 FERROMCP_INVALID_DEFINITION);
    CHECK_CONTAINS(ferromcp_last_error_message(), "invalid mount prefix");
    CHECK_STATUS(ferromcp_server_mount_server(gateway, "self", gateway, &mount),
                 FERROMCP_INVALID_DEFINITION);
    CHECK_CONTAINS(ferromcp_last_error_message(), "cannot be mounted in itself");
    CHECK_STATUS(ferromcp_server_mount_server(NULL, "alpha", alpha, &mount),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_mount_server(gateway, NULL, alpha, &mount),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_mount_server(gateway, "alpha", NULL, &mount),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_mount_server(gateway, "alpha", alpha, NULL),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_mount_client(gateway, "beta", NULL, &mount),
                 FERROMCP_NULL_ARGUMENT);
    CHECK(mount == NULL);
    ferromcp_mount_unmount(NULL);
    ferromcp_mount_free(NULL);
}

int main(void) {
    ferromcp_server *gateway = NULL;
    CHECK_STATUS(ferromcp_server_new("gateway", "1.0.0", &gateway), FERROMCP_OK);
    ferromcp_server *alpha = upstream_server("alpha");
    ferromcp_server *beta = upstream_server("beta");
    if (gateway == NULL || alpha == NULL || beta == NULL) {
        return check_report("test_mount");
    }

    test_bad_arguments(gateway, alpha);

    /* (a) Another server object, mounted before the gateway serves. */
    ferromcp_mount *alpha_mount = NULL;
    CHECK_STATUS(ferromcp_server_mount_server(gateway, "alpha", alpha, &alpha_mount),
                 FERROMCP_OK);
    CHECK(alpha_mount != NULL);

    struct serving gateway_serving, beta_serving;
    start(&gateway_serving, gateway);
    start(&beta_serving, beta);
    ferromcp_client *client = connect_to(gateway_serving.port);
    ferromcp_client *beta_client = connect_to(beta_serving.port);
    if (client == NULL || beta_client == NULL) {
        return check_report("test_mount");
    }

    char *list = tool_list(client);
    CHECK_CONTAINS(list, "\"alpha_echo\"");
    CHECK_CONTAINS(list, "Echoes its text");
    ferromcp_string_free(list);
    char *text = call_echo(client, "alpha_echo", FERROMCP_OK);
    CHECK(text != NULL && strcmp(text, "alpha: hi") == 0);
    ferromcp_string_free(text);

    /* An upstream reached through a client, mounted while the gateway
     * serves; its handle freed, the mount stays. */
    ferromcp_mount *beta_mount = NULL;
    CHECK_STATUS(ferromcp_server_mount_client(gateway, "beta", beta_client, &beta_mount),
                 FERROMCP_OK);
    ferromcp_mount_free(beta_mount);
    text = call_echo(client, "beta_echo", FERROMCP_OK);
    CHECK(text != NULL && strcmp(text, "beta: hi") == 0);
    ferromcp_string_free(text);

    /* (c) Unmounting takes `alpha_echo` out, and leaves `beta_echo`. */
    ferromcp_mount_unmount(alpha_mount);
    text = call_echo(client, "alpha_echo", FERROMCP_PEER_ERROR);
    CHECK(text == NULL);
    list = tool_list(client);
    CHECK(list != NULL && strstr(list, "alpha_echo") == NULL);
    CHECK_CONTAINS(list, "\"beta_echo\"");
    ferromcp_string_free(list);
    text = call_echo(client, "beta_echo", FERROMCP_OK);
    CHECK(text != NULL && strcmp(text, "beta: hi") == 0);
    ferromcp_string_free(text);
    /* The upstream still has its own tool. */
    text = call_echo(beta_client, "echo", FERROMCP_OK);
    CHECK(text != NULL && strcmp(text, "beta: hi") == 0);
    ferromcp_string_free(text);

    /* A proxy of beta: beta's tools under their own names, served on a
     * port of its own; freed before beta's client, as documented. */
    ferromcp_server *proxy = NULL;
    CHECK_STATUS(ferromcp_server_proxy(NULL, &proxy), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_proxy(beta_client, NULL), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_proxy(beta_client, &proxy), FERROMCP_OK);
    if (proxy != NULL) {
        struct serving proxy_serving;
        start(&proxy_serving, proxy);
        ferromcp_client *proxied = connect_to(proxy_serving.port);
        if (proxied != NULL) {
            list = tool_list(proxied);
            CHECK_CONTAINS(list, "\"echo\"");
            CHECK(list != NULL && strstr(list, "beta_echo") == NULL);
            ferromcp_string_free(list);
            text = call_echo(proxied, "echo", FERROMCP_OK);
            CHECK(text != NULL && strcmp(text, "beta: hi") == 0);
            ferromcp_string_free(text);
            ferromcp_client_free(proxied);
        }
        stop(&proxy_serving);
        ferromcp_server_free(proxy);
    }

    ferromcp_client_free(client);
    stop(&gateway_serving);
    /* Takes the beta mount out too, before its client goes. */
    ferromcp_server_free(gateway);
    ferromcp_client_free(beta_client);
    stop(&beta_serving);
    ferromcp_server_free(alpha);
    ferromcp_server_free(beta);

    /* The in-memory pipe and connections may hold the tools for a moment
     * after their server is freed: wait for both finalizers. */
    for (int i = 0; i < 250 && atomic_load(&finalized) < 2; i++) {
        sleep_ms(20);
    }
    CHECK(atomic_load(&finalized) == 2);
    sleep_ms(100);
    CHECK(atomic_load(&finalized) == 2); /* and never more */
    return check_report("test_mount");
}
