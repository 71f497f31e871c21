/* Protected servers from C (issue 15): a token verifier callback (accept,
 * reject, fail, and later from another thread), "auth" in the HTTP options,
 * per-tool and per-prompt scopes, the claims read from the call context,
 * the protected resource metadata, and the JWT verifier by settings; then
 * shutdown and free with every finalizer run exactly once. Run under
 * valgrind. The protocol (challenges, audience and expiry checks) is core's:
 * this shows the binding carries the settings, the callback and the claims. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "http_util.h"

#define RESOURCE "http://127.0.0.1/mcp"

static atomic_int finalized = 0;
static atomic_int verified = 0;

static void count_finalizer(void *userdata) {
    (void)userdata;
    atomic_fetch_add(&finalized, 1);
}

/* ---- the verifier: a table of tokens ---- */

struct later_job {
    ferromcp_call *call;
};

static void *accept_later(void *arg) {
    struct later_job *job = arg;
    sleep_ms(30);
    CHECK_STATUS(ferromcp_call_accept_token(
                     job->call, "{\"sub\":\"dave\",\"scope\":\"files:read\",\"aud\":\"" RESOURCE "\"}"),
                 FERROMCP_OK);
    free(job);
    return NULL;
}

static void verify(void *userdata, const char *token, size_t token_len, ferromcp_call *call) {
    CHECK(userdata == (void *)&verified);
    CHECK(strlen(token) == token_len);
    atomic_fetch_add(&verified, 1);
    char claims[512];
    long exp = (long)time(NULL) + 3600;
    if (strcmp(token, "reader") == 0 || strcmp(token, "writer") == 0) {
        bool writer = token[0] == 'w';
        snprintf(claims, sizeof claims,
                 "{\"sub\":\"%s\",\"client_id\":\"app\",\"scope\":\"%s\",\"aud\":\"%s\","
                 "\"exp\":%ld,\"extra\":42}",
                 writer ? "bob" : "alice", writer ? "files:read files:write prompts" : "files:read",
                 RESOURCE, exp);
        CHECK_STATUS(ferromcp_call_accept_token(call, claims), FERROMCP_OK);
    } else if (strcmp(token, "elsewhere") == 0) {
        CHECK_STATUS(ferromcp_call_accept_token(
                         call, "{\"sub\":\"eve\",\"aud\":\"https://other.example.com/mcp\"}"),
                     FERROMCP_OK);
    } else if (strcmp(token, "boom") == 0) {
        CHECK_STATUS(ferromcp_call_fail(call, "introspection endpoint down"), FERROMCP_OK);
    } else if (strcmp(token, "not-json") == 0) {
        CHECK_STATUS(ferromcp_call_accept_token(call, "{nope"), FERROMCP_INVALID_JSON);
    } else if (strcmp(token, "later") == 0) {
        struct later_job *job = malloc(sizeof *job);
        pthread_t thread;
        if (job == NULL) {
            ferromcp_call_fail(call, "out of memory");
            return;
        }
        job->call = call;
        if (pthread_create(&thread, NULL, accept_later, job) != 0) {
            free(job);
            ferromcp_call_fail(call, "cannot start a thread");
            return;
        }
        pthread_detach(thread);
    } else {
        CHECK_STATUS(ferromcp_call_reject_token(call, "unknown token"), FERROMCP_OK);
    }
}

/* ---- tools ---- */

/* Answers with the claims ferromcp read from the token. */
static void whoami(void *userdata, const char *arguments_json, size_t arguments_len,
                   ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    char *auth = NULL;
    if (ferromcp_context_auth_json(ferromcp_call_context(call), &auth) != FERROMCP_OK) {
        ferromcp_call_fail(call, "no auth");
        return;
    }
    char *subject = NULL;
    CHECK_STATUS(ferromcp_json_get(auth, "/subject", &subject), FERROMCP_OK);
    CHECK(subject != NULL && (strcmp(subject, "alice") == 0 || strcmp(subject, "dave") == 0 ||
                              strcmp(subject, "bob") == 0));
    ferromcp_string_free(subject);
    ferromcp_call_respond(call, auth);
    ferromcp_string_free(auth);
}

static void delete_file(void *userdata, const char *arguments_json, size_t arguments_len,
                        ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    ferromcp_call_respond(call, "\"deleted\"");
}

/* ---- a minimal HTTP client (one request per connection) ---- */

/* Sends one request and returns the whole HTTP response (malloc'd), or
 * NULL on a transport failure. `body` NULL sends a GET. */
static char *http(uint16_t port, const char *path, const char *token, const char *method_header,
                  const char *name_header, const char *body) {
    char auth[256] = "";
    if (token != NULL) {
        snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", token);
    }
    char request[4096];
    int request_len;
    if (body == NULL) {
        request_len = snprintf(request, sizeof request,
                               "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nConnection: close\r\n\r\n",
                               path, (unsigned)port);
    } else {
        request_len = snprintf(
            request, sizeof request,
            "POST %s HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n%s"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: %s\r\nMcp-Name: %s\r\n"
            "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
            path, (unsigned)port, auth, method_header, name_header, strlen(body), body);
    }
    if (request_len <= 0 || (size_t)request_len >= sizeof request) {
        return NULL;
    }
    return http_exchange(port, request, (size_t)request_len);
}

#define META                                                                                   \
    "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                  \
    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static char *call_tool(uint16_t port, const char *name, const char *token) {
    char body[512];
    snprintf(body, sizeof body,
             "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"%s\","
             "\"arguments\":{}," META "}}",
             name);
    return http(port, "/mcp", token, "tools/call", name, body);
}

/* ---- serving ---- */

struct serve_job {
    ferromcp_server *server;
    const char *options;
    ferromcp_status status;
};

static void *serve(void *arg) {
    struct serve_job *job = arg;
    job->status = ferromcp_server_serve_http_ex(job->server, "127.0.0.1", 0, job->options);
    return NULL;
}

static uint16_t wait_port(ferromcp_server *server) {
    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    return port;
}

static const char *const AUTH_OPTIONS =
    "{\"auth\":{\"resource\":\"" RESOURCE "\",\"authorizationServers\":[\"https://auth.example.com\"],"
    "\"scopesSupported\":[\"files:read\",\"files:write\"],\"resourceName\":\"Test files\"}}";

static void prompt_greet(void *userdata, const char *input_json, ferromcp_call *call) {
    (void)userdata;
    (void)input_json;
    ferromcp_call_respond(call, "\"hello\"");
}

static void protected_by_callback(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("auth-test", "0.1.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(ferromcp_server_add_tool(server, "whoami", NULL, "{\"type\":\"object\"}", NULL,
                                         whoami, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool(server, "delete_file", NULL, "{\"type\":\"object\"}",
                                         NULL, delete_file, NULL, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_prompt(server, "{\"name\":\"greet\"}", prompt_greet, NULL,
                                           count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_require_scopes(server, FERROMCP_SCOPE_TOOL, "delete_file",
                                               "[\"files:write\"]"),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_require_scopes(server, FERROMCP_SCOPE_PROMPT, "greet",
                                               "[\"prompts\"]"),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_require_scopes(server, FERROMCP_SCOPE_TOOL, "x", "\"files\""),
                 FERROMCP_INVALID_JSON);

    /* "auth" without "jwt" needs a verifier: refused before one is set. */
    CHECK_STATUS(ferromcp_server_serve_http_ex(server, "127.0.0.1", 0, AUTH_OPTIONS),
                 FERROMCP_INVALID_STATE);
    /* A verifier replaced is freed at once. */
    CHECK_STATUS(ferromcp_server_set_token_verifier(server, verify, &verified, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_set_token_verifier(server, verify, &verified, count_finalizer),
                 FERROMCP_OK);
    CHECK(atomic_load(&finalized) == 1);

    struct serve_job job = {server, AUTH_OPTIONS, FERROMCP_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve, &job) == 0);
    uint16_t port = wait_port(server);
    CHECK(port != 0);

    char *r = call_tool(port, "whoami", NULL);
    CHECK_CONTAINS(r, "HTTP/1.1 401");
    CHECK_CONTAINS(r, "resource_metadata=\"http://127.0.0.1/.well-known/oauth-protected-resource/mcp\"");
    free(r);

    const char *bad[] = {"nonsense", "elsewhere", "not-json"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        r = call_tool(port, "whoami", bad[i]);
        CHECK_CONTAINS(r, i < 2 ? "HTTP/1.1 401" : "HTTP/1.1 503");
        if (i < 2) {
            CHECK_CONTAINS(r, "error=\"invalid_token\"");
        }
        free(r);
    }
    r = call_tool(port, "whoami", "boom");
    CHECK_CONTAINS(r, "HTTP/1.1 503");
    free(r);

    r = http(port, "/.well-known/oauth-protected-resource/mcp", NULL, NULL, NULL, NULL);
    CHECK_CONTAINS(r, "HTTP/1.1 200");
    CHECK_CONTAINS(r, "\"resource\":\"" RESOURCE "\"");
    CHECK_CONTAINS(r, "\"authorization_servers\":[\"https://auth.example.com\"]");
    CHECK_CONTAINS(r, "\"resource_name\":\"Test files\"");
    free(r);

    r = call_tool(port, "whoami", "reader");
    CHECK_CONTAINS(r, "HTTP/1.1 200");
    CHECK_CONTAINS(r, "\\\"subject\\\":\\\"alice\\\"");
    CHECK_CONTAINS(r, "\\\"clientId\\\":\\\"app\\\"");
    CHECK_CONTAINS(r, "\\\"scopes\\\":[\\\"files:read\\\"]");
    CHECK_CONTAINS(r, "\\\"extra\\\":42");
    free(r);

    r = call_tool(port, "whoami", "later");
    CHECK_CONTAINS(r, "\\\"subject\\\":\\\"dave\\\"");
    free(r);

    r = call_tool(port, "delete_file", "reader");
    CHECK_CONTAINS(r, "HTTP/1.1 403");
    CHECK_CONTAINS(r, "error=\"insufficient_scope\"");
    CHECK_CONTAINS(r, "files:write");
    free(r);
    r = call_tool(port, "delete_file", "writer");
    CHECK_CONTAINS(r, "HTTP/1.1 200");
    CHECK_CONTAINS(r, "deleted");
    free(r);

    r = http(port, "/mcp", "reader", "prompts/get", "greet",
             "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\",\"params\":{\"name\":\"greet\"," META
             "}}");
    CHECK_CONTAINS(r, "HTTP/1.1 403");
    CHECK_CONTAINS(r, "prompts");
    free(r);

    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    pthread_join(thread, NULL);
    CHECK_STATUS(job.status, FERROMCP_OK);
    ferromcp_server_free(server);
    /* Two tools, a prompt, two verifiers. */
    for (int i = 0; i < 250 && atomic_load(&finalized) < 5; i++) {
        sleep_ms(20);
    }
    CHECK(atomic_load(&finalized) == 5);
    CHECK(atomic_load(&verified) >= 8);
}

static void protected_by_jwt_settings(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("jwt-test", "0.1.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return;
    }
    CHECK_STATUS(ferromcp_server_add_tool(server, "whoami", NULL, "{\"type\":\"object\"}", NULL,
                                         whoami, NULL, count_finalizer),
                 FERROMCP_OK);
    /* Misspelt settings are refused. */
    CHECK_STATUS(ferromcp_server_serve_http_ex(
                     server, "127.0.0.1", 0,
                     "{\"auth\":{\"resource\":\"" RESOURCE "\",\"authorizationServers\":[\"x\"],"
                     "\"jwt\":{\"isuer\":\"x\",\"audience\":\"y\"}}}"),
                 FERROMCP_INVALID_JSON);
    /* So is a duration that is not a non-negative number of seconds. */
    CHECK_STATUS(ferromcp_server_serve_http_ex(
                     server, "127.0.0.1", 0,
                     "{\"auth\":{\"resource\":\"" RESOURCE "\",\"authorizationServers\":[\"x\"],"
                     "\"jwt\":{\"issuer\":\"x\",\"audience\":\"y\",\"cacheTtlSeconds\":-1}}}"),
                 FERROMCP_INVALID_JSON);
    struct serve_job job = {
        server,
        "{\"auth\":{\"resource\":\"" RESOURCE "\",\"authorizationServers\":[\"https://auth.example.com\"],"
        "\"jwt\":{\"issuer\":\"https://auth.example.com\",\"audience\":\"" RESOURCE "\","
        "\"jwksUri\":\"http://127.0.0.1:9/jwks\",\"leewaySeconds\":30,\"cacheTtlSeconds\":0}}}",
        FERROMCP_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve, &job) == 0);
    uint16_t port = wait_port(server);
    CHECK(port != 0);
    /* Not a JWT: refused before any key is fetched. */
    char *r = call_tool(port, "whoami", "not-a-jwt");
    CHECK_CONTAINS(r, "HTTP/1.1 401");
    CHECK_CONTAINS(r, "error=\"invalid_token\"");
    free(r);
    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    pthread_join(thread, NULL);
    CHECK_STATUS(job.status, FERROMCP_OK);
    ferromcp_server_free(server);
    /* As in test_http.c: connections finish (and release the server's
     * hang-up watcher) a moment after serve returns. */
    for (int i = 0; i < 250 && atomic_load(&finalized) < 6; i++) {
        sleep_ms(20);
    }
    CHECK(atomic_load(&finalized) == 6);
    sleep_ms(100);
}

int main(void) {
    protected_by_callback();
    protected_by_jwt_settings();
    return check_report("test_auth");
}
