/* The C client's OAuth against a protected endpoint and authorization
 * server (bindings-c/tests/oauth_server.py, which checks PKCE, client
 * secrets and assertions): a login through a C authorize callback, a C
 * token store that a second client reuses, client credentials, jwt-bearer
 * with a C assertion callback, failures as FERROMCP_AUTH, option errors,
 * the loopback redirect listener, and every userdata released exactly once. Run from the repository root,
 * under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#include "check.h"

static char g_url[64];
static char g_issuer[64];

/* ---- callbacks ---- */

static atomic_int authorized = 0;
static atomic_int finalized = 0;

static void count_finalizer(void *userdata) {
    CHECK(userdata == (void *)&finalized);
    atomic_fetch_add(&finalized, 1);
}

/* The mock approves at once: its redirect is the user's answer. */
static void headless(void *userdata, const char *url, ferromcp_oauth_reply *reply) {
    CHECK(userdata == (void *)&finalized);
    CHECK_CONTAINS(url, "code_challenge_method=S256");
    CHECK_CONTAINS(url, "client_id=registered");
    atomic_fetch_add(&authorized, 1);
    char *redirect = NULL;
    CHECK_STATUS(ferromcp_oauth_headless_authorize(url, &redirect), FERROMCP_OK);
    CHECK_STATUS(ferromcp_oauth_reply_set(reply, redirect), FERROMCP_OK);
    ferromcp_string_free(redirect);
}

static void refuse(void *userdata, const char *url, ferromcp_oauth_reply *reply) {
    (void)userdata;
    (void)url;
    CHECK_STATUS(ferromcp_oauth_reply_fail(reply, "the user closed the browser"), FERROMCP_OK);
}

static void silent(void *userdata, const char *url, ferromcp_oauth_reply *reply) {
    (void)userdata;
    (void)url;
    (void)reply;
}

static void assertion(void *userdata, const char *issuer, const char *resource,
                      ferromcp_oauth_reply *reply) {
    CHECK(userdata == (void *)&finalized);
    CHECK(strcmp(issuer, g_issuer) == 0);
    CHECK(strcmp(resource, g_url) == 0);
    CHECK_STATUS(ferromcp_oauth_reply_set(reply, "platform.jwt.value"), FERROMCP_OK);
}

/* ---- a token store: one slot per record kind ---- */

struct store {
    char *records[2];
    char *keys[2];
    int loads, saves;
};

static void store_load(void *userdata, ferromcp_oauth_record record, const char *key,
                       ferromcp_oauth_reply *reply) {
    struct store *store = userdata;
    store->loads++;
    if (store->records[record] != NULL && strcmp(store->keys[record], key) == 0) {
        CHECK_STATUS(ferromcp_oauth_reply_set(reply, store->records[record]), FERROMCP_OK);
    }
}

static void store_save(void *userdata, ferromcp_oauth_record record, const char *key,
                       const char *record_json) {
    struct store *store = userdata;
    store->saves++;
    free(store->records[record]);
    free(store->keys[record]);
    store->records[record] = record_json ? strdup(record_json) : NULL;
    store->keys[record] = strdup(key);
}

static void store_clear(struct store *store) {
    for (int i = 0; i < 2; i++) {
        free(store->records[i]);
        free(store->keys[i]);
    }
}

/* ---- helpers ---- */

/* Client options with `oauth_json`, the callbacks given, attached. */
static ferromcp_client_options *options_with(const char *oauth_json,
                                             ferromcp_oauth_authorize_callback authorize,
                                             ferromcp_oauth_assertion_callback assert_cb,
                                             struct store *store) {
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new("{\"era\":\"modern\",\"timeoutMs\":20000}", &options),
                 FERROMCP_OK);
    ferromcp_oauth_options *oauth = NULL;
    CHECK_STATUS(ferromcp_oauth_options_new(oauth_json, &oauth), FERROMCP_OK);
    if (authorize) {
        CHECK_STATUS(ferromcp_oauth_options_on_authorize(oauth, authorize, &finalized,
                                                         count_finalizer),
                     FERROMCP_OK);
    }
    if (assert_cb) {
        CHECK_STATUS(ferromcp_oauth_options_on_assertion(oauth, assert_cb, &finalized,
                                                         count_finalizer),
                     FERROMCP_OK);
    }
    if (store) {
        CHECK_STATUS(ferromcp_oauth_options_set_store(oauth, store_load, store_save, store, NULL),
                     FERROMCP_OK);
    }
    CHECK_STATUS(ferromcp_client_options_set_oauth(options, oauth), FERROMCP_OK);
    ferromcp_oauth_options_free(oauth); /* the client options keep what they need */
    return options;
}

/* Connects with `options` (freed here) and calls `echo`: the call's status. */
static ferromcp_status call_echo(ferromcp_client_options *options) {
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_http(g_url, NULL, options, &client), FERROMCP_OK);
    ferromcp_client_options_free(options);
    char *result = NULL;
    ferromcp_status status =
        ferromcp_client_call_tool(client, "echo", "{}", 0, NULL, NULL, NULL, &result);
    if (status == FERROMCP_OK) CHECK_CONTAINS(result, "ok with token-");
    ferromcp_string_free(result);
    ferromcp_client_free(client);
    return status;
}

/* ---- tests ---- */

static void test_login_and_store(void) {
    struct store store = {0};
    const char *json = "{\"redirectUri\":\"http://127.0.0.1:1/callback\",\"clientName\":\"c-test\"}";
    CHECK_STATUS(call_echo(options_with(json, headless, NULL, &store)), FERROMCP_OK);
    CHECK(atomic_load(&authorized) == 1);
    CHECK(store.records[FERROMCP_OAUTH_TOKENS] != NULL);
    if (store.records[FERROMCP_OAUTH_TOKENS] != NULL) {
        CHECK_CONTAINS(store.records[FERROMCP_OAUTH_TOKENS], "\"access_token\":\"token-");
        CHECK(strcmp(store.keys[FERROMCP_OAUTH_TOKENS], g_url) == 0);
    }
    CHECK(store.records[FERROMCP_OAUTH_CLIENT] != NULL);
    if (store.records[FERROMCP_OAUTH_CLIENT] != NULL) {
        CHECK_CONTAINS(store.records[FERROMCP_OAUTH_CLIENT], "\"client_id\":\"registered\"");
        CHECK(strcmp(store.keys[FERROMCP_OAUTH_CLIENT], g_issuer) == 0);
    }
    /* A second client with the same store sends the saved token: no login. */
    CHECK_STATUS(call_echo(options_with(json, headless, NULL, &store)), FERROMCP_OK);
    CHECK(atomic_load(&authorized) == 1);
    CHECK(store.loads >= 2 && store.saves >= 2);
    store_clear(&store);
}

static void test_client_credentials(void) {
    CHECK_STATUS(call_echo(options_with(
                     "{\"grant\":\"clientCredentials\",\"clientId\":\"svc\",\"clientSecret\":\"pw\"}",
                     NULL, NULL, NULL)),
                 FERROMCP_OK);
    /* A wrong secret is refused by the authorization server. */
    ferromcp_status status = call_echo(options_with(
        "{\"grant\":\"clientCredentials\",\"clientId\":\"svc\",\"clientSecret\":\"nope\"}", NULL,
        NULL, NULL));
    CHECK_STATUS(status, FERROMCP_AUTH);
}

static void test_jwt_bearer(void) {
    CHECK_STATUS(call_echo(options_with("{\"grant\":\"jwtBearer\",\"clientId\":\"workload\"}",
                                        NULL, assertion, NULL)),
                 FERROMCP_OK);
}

static void test_failed_logins(void) {
    const char *json = "{\"redirectUri\":\"http://127.0.0.1:1/callback\"}";
    CHECK_STATUS(call_echo(options_with(json, refuse, NULL, NULL)), FERROMCP_AUTH);
    CHECK_CONTAINS(ferromcp_last_error_message(), "the user closed the browser");
    CHECK_STATUS(call_echo(options_with(json, silent, NULL, NULL)), FERROMCP_AUTH);
    CHECK_CONTAINS(ferromcp_last_error_message(), "gave no answer");
}

static void test_stored_only(void) {
    struct store store = {0};
    const char *stored_only = "{\"storedOnly\":\"run `mytool login` first\"}";
    /* No login yet: the message, and no client registered (none saved). */
    CHECK_STATUS(call_echo(options_with(stored_only, NULL, NULL, &store)), FERROMCP_AUTH);
    CHECK_CONTAINS(ferromcp_last_error_message(), "run `mytool login` first");
    CHECK(store.records[FERROMCP_OAUTH_CLIENT] == NULL);
    /* A login (the tool's `login` command) keeps its tokens in the store;
     * the stored-only client then uses them without a login of its own. */
    const char *login = "{\"redirectUri\":\"http://127.0.0.1:1/callback\"}";
    CHECK_STATUS(call_echo(options_with(login, headless, NULL, &store)), FERROMCP_OK);
    int logins = atomic_load(&authorized);
    CHECK_STATUS(call_echo(options_with(stored_only, NULL, NULL, &store)), FERROMCP_OK);
    CHECK(atomic_load(&authorized) == logins);
    store_clear(&store);
}

static void test_option_errors(void) {
    ferromcp_oauth_options *oauth = NULL;
    CHECK_STATUS(ferromcp_oauth_options_new("{\"redirecturi\":\"x\"}", &oauth),
                 FERROMCP_INVALID_JSON);
    CHECK_CONTAINS(ferromcp_last_error_message(), "unknown option member \"redirecturi\"");
    CHECK_STATUS(ferromcp_oauth_options_new("{}", &oauth), FERROMCP_INVALID_JSON);
    CHECK_CONTAINS(ferromcp_last_error_message(), "\"redirectUri\" is required");
    CHECK_STATUS(ferromcp_oauth_options_new("{\"grant\":\"password\"}", &oauth),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_oauth_options_new(
                     "{\"grant\":\"clientCredentials\",\"clientId\":\"a\",\"clientSecret\":\"b\","
                     "\"privateKeyPem\":\"c\"}",
                     &oauth),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_oauth_options_new(NULL, &oauth), FERROMCP_NULL_ARGUMENT);
    CHECK(oauth == NULL);

    /* The authorization code grant needs its callback before it is attached. */
    CHECK_STATUS(ferromcp_oauth_options_new("{\"redirectUri\":\"http://127.0.0.1:1/cb\"}", &oauth),
                 FERROMCP_OK);
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new(NULL, &options), FERROMCP_OK);
    CHECK_STATUS(ferromcp_client_options_set_oauth(options, oauth), FERROMCP_INVALID_ARGUMENT);
    CHECK_CONTAINS(ferromcp_last_error_message(), "ferromcp_oauth_options_on_authorize");
    CHECK_STATUS(ferromcp_oauth_options_on_authorize(oauth, NULL, NULL, NULL),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_oauth_options_on_authorize(NULL, headless, NULL, NULL),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_oauth_options_set_store(oauth, store_load, NULL, NULL, NULL),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_client_options_set_oauth(NULL, oauth), FERROMCP_NULL_ARGUMENT);
    /* NULL removes OAuth again. */
    CHECK_STATUS(ferromcp_client_options_set_oauth(options, NULL), FERROMCP_OK);
    CHECK_STATUS(ferromcp_oauth_reply_set(NULL, "x"), FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_oauth_headless_authorize(NULL, NULL), FERROMCP_NULL_ARGUMENT);
    CHECK(strlen(ferromcp_status_message(FERROMCP_AUTH)) > 0);
    ferromcp_client_options_free(options);
    ferromcp_oauth_options_free(oauth);
    ferromcp_oauth_options_free(NULL);
}

/* The browser coming back: GET /favicon.ico (ignored), then the redirect. */
static void browser_get(int port, const char *target) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0);
    char request[256];
    int n = snprintf(request, sizeof request, "GET %s HTTP/1.1\r\nhost: x\r\n\r\n", target);
    CHECK(write(fd, request, (size_t)n) == n);
    char answer[512];
    while (read(fd, answer, sizeof answer) > 0) {
    }
    close(fd);
}

static void *browser(void *uri) {
    int port = atoi(strrchr((const char *)uri, ':') + 1);
    sleep_ms(50);
    browser_get(port, "/favicon.ico");
    browser_get(port, "/callback?code=c&state=s");
    return NULL;
}

static void test_loopback(void) {
    ferromcp_oauth_loopback *loopback = NULL;
    CHECK_STATUS(ferromcp_oauth_loopback_bind(0, "callback", &loopback), FERROMCP_OK);
    const char *uri = ferromcp_oauth_loopback_redirect_uri(loopback);
    CHECK(uri != NULL && strncmp(uri, "http://127.0.0.1:", 17) == 0);
    CHECK(ferromcp_oauth_loopback_redirect_uri(NULL) == NULL);
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, browser, (void *)uri) == 0);
    char *redirect = NULL;
    CHECK_STATUS(ferromcp_oauth_loopback_wait(loopback, 5000, &redirect), FERROMCP_OK);
    pthread_join(thread, NULL);
    char expected[128];
    snprintf(expected, sizeof expected, "%s?code=c&state=s", uri);
    CHECK(redirect != NULL && strcmp(redirect, expected) == 0);
    ferromcp_string_free(redirect);
    redirect = NULL;
    CHECK_STATUS(ferromcp_oauth_loopback_wait(loopback, 20, &redirect), FERROMCP_AUTH);
    CHECK(redirect == NULL);
    ferromcp_oauth_loopback_free(loopback);
    ferromcp_oauth_loopback_free(NULL);
}

int main(void) {
    FILE *server = popen("exec python3 bindings-c/tests/oauth_server.py", "r");
    if (server == NULL) {
        perror("starting oauth_server.py");
        return 1;
    }
    int port = 0;
    long pid = 0;
    if (fscanf(server, "%d %ld", &port, &pid) != 2) {
        fputs("oauth_server.py did not print its port\n", stderr);
        pclose(server);
        return 1;
    }
    snprintf(g_url, sizeof g_url, "http://127.0.0.1:%d/mcp", port);
    snprintf(g_issuer, sizeof g_issuer, "http://127.0.0.1:%d", port);

    test_option_errors();
    test_login_and_store();
    test_client_credentials();
    test_jwt_bearer();
    test_failed_logins();
    test_stored_only();
    test_loopback();

    /* Every callback's userdata given with a finalizer (two authorize
     * callbacks in test_login_and_store, one per other login test) was
     * released once the options and clients holding it were freed. */
    for (int i = 0; i < 200 && atomic_load(&finalized) < 6; i++) sleep_ms(10);
    CHECK(atomic_load(&finalized) == 6);

    kill((pid_t)pid, SIGTERM);
    pclose(server);
    return check_report("test_oauth");
}
