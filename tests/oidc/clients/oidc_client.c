/* The C client of the OpenID provider test (core/tests/oidc_provider.rs):
 * logs in to a protected ferromcp server with ferromcp_oauth_options_*,
 * calls a tool and prints its result as JSON on stdout. Environment as for
 * oidc_client.py (OIDC_SERVER, OIDC_CA, OIDC_GRANT, OIDC_CLIENT_ID,
 * OIDC_CLIENT_SECRET, OIDC_ISSUER, OIDC_REDIRECT, OIDC_TOOL), plus
 * OIDC_BROWSER (default tests/oidc/browser.sh): the authorize callback of
 * the authorization code grant runs it, the test's browser, and answers
 * with the redirect it prints. Built by `make test-oidc` into
 * target/bin/oidc-client-c. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ferromcp.h"

/* A growing string; on allocation failure the program gives up. */
typedef struct {
    char *data;
    size_t len, cap;
} buf;

static void put(buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->data = realloc(b->data, b->cap);
        if (b->data == NULL) abort();
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void puts_(buf *b, const char *s) { put(b, s, strlen(s)); }

/* `s` as a JSON string literal (the C API takes JSON text, PEM has newlines). */
static void put_json_string(buf *b, const char *s) {
    puts_(b, "\"");
    for (; *s; s++) {
        char esc[8];
        if (*s == '"' || *s == '\\') {
            esc[0] = '\\', esc[1] = *s, esc[2] = 0;
        } else if ((unsigned char)*s < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", (unsigned)(unsigned char)*s);
        } else {
            esc[0] = *s, esc[1] = 0;
        }
        puts_(b, esc);
    }
    puts_(b, "\"");
}

static const char *need(const char *name) {
    const char *value = getenv(name);
    if (value == NULL) {
        fprintf(stderr, "oidc-client-c: %s is not set\n", name);
        exit(2);
    }
    return value;
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) return NULL;
    buf b = {0};
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) put(&b, chunk, n);
    fclose(f);
    return b.data;
}

/* Runs on a ferromcp host thread, so it may block: runs the browser (no
 * shell: the URL has `&`s) and answers with the first line it prints. */
static void authorize(void *userdata, const char *url, ferromcp_oauth_reply *reply) {
    const char *browser = userdata;
    int out[2];
    if (pipe(out) != 0) {
        ferromcp_oauth_reply_fail(reply, "pipe failed");
        return;
    }
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        close(out[1]);
        execl(browser, browser, url, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    buf line = {0};
    char chunk[1024];
    ssize_t n;
    while ((n = read(out[0], chunk, sizeof chunk)) > 0) put(&line, chunk, (size_t)n);
    close(out[0]);
    int status = 1;
    if (pid > 0) waitpid(pid, &status, 0);
    if (line.data != NULL) line.data[strcspn(line.data, "\r\n")] = 0;
    if (pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && line.data != NULL) {
        ferromcp_oauth_reply_set(reply, line.data);
    } else {
        ferromcp_oauth_reply_fail(reply, "the browser (browser.sh) failed");
    }
    free(line.data);
}

int main(void) {
    const char *grant = need("OIDC_GRANT");
    const char *ca_path = need("OIDC_CA");
    char *ca = read_file(ca_path);
    if (ca == NULL) {
        fprintf(stderr, "oidc-client-c: cannot read %s\n", ca_path);
        return 2;
    }
    buf client_json = {0}, oauth_json = {0};
    puts_(&client_json, "{\"timeoutMs\":30000,\"caCerts\":[");
    put_json_string(&client_json, ca);
    puts_(&client_json, "]}");
    free(ca);
    int code = strcmp(grant, "code") == 0;
    if (code) {
        puts_(&oauth_json, "{\"redirectUri\":");
        put_json_string(&oauth_json, need("OIDC_REDIRECT"));
        puts_(&oauth_json, ",\"preRegistered\":[{\"issuer\":");
        put_json_string(&oauth_json, need("OIDC_ISSUER"));
        puts_(&oauth_json, ",\"clientId\":");
        put_json_string(&oauth_json, need("OIDC_CLIENT_ID"));
        puts_(&oauth_json, "}]}");
    } else if (strcmp(grant, "client-credentials") == 0) {
        puts_(&oauth_json, "{\"grant\":\"clientCredentials\",\"clientId\":");
        put_json_string(&oauth_json, need("OIDC_CLIENT_ID"));
        puts_(&oauth_json, ",\"clientSecret\":");
        put_json_string(&oauth_json, need("OIDC_CLIENT_SECRET"));
        puts_(&oauth_json, "}");
    } else {
        fprintf(stderr, "oidc-client-c: unknown OIDC_GRANT %s\n", grant);
        return 2;
    }
    const char *browser = getenv("OIDC_BROWSER") ? getenv("OIDC_BROWSER") : "tests/oidc/browser.sh";
    const char *tool = getenv("OIDC_TOOL") ? getenv("OIDC_TOOL") : "whoami";

    ferromcp_client_options *options = NULL;
    ferromcp_oauth_options *oauth = NULL;
    ferromcp_client *client = NULL;
    char *result = NULL;
    ferromcp_status status = ferromcp_client_options_new(client_json.data, &options);
    if (status == FERROMCP_OK) status = ferromcp_oauth_options_new(oauth_json.data, &oauth);
    if (status == FERROMCP_OK && code)
        status = ferromcp_oauth_options_on_authorize(oauth, authorize, (void *)browser, NULL);
    if (status == FERROMCP_OK) status = ferromcp_client_options_set_oauth(options, oauth);
    if (status == FERROMCP_OK)
        status = ferromcp_client_connect_http(need("OIDC_SERVER"), NULL, options, &client);
    if (status == FERROMCP_OK)
        status = ferromcp_client_call_tool(client, tool, "{}", 0, NULL, NULL, NULL, &result);
    if (status == FERROMCP_OK) {
        printf("%s\n", result);
    } else {
        fprintf(stderr, "oidc-client-c: %s (status %d)\n", ferromcp_last_error_message(),
                (int)status);
    }
    ferromcp_string_free(result);
    ferromcp_client_free(client);
    ferromcp_oauth_options_free(oauth);
    ferromcp_client_options_free(options);
    free(client_json.data);
    free(oauth_json.data);
    return status == FERROMCP_OK ? 0 : 1;
}
