/* The C server serving https:// itself ("tls" in the options of
 * ferromcp_server_serve_http_ex()): a CA and a server certificate made at
 * test time by the openssl command, the C client trusting the CA
 * ("caCerts"); a missing certificate file refuses to serve, naming it; a
 * settings mistake is FERROMCP_INVALID_JSON. Run under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static char dir[64];

/* Runs an openssl command in `dir`; whether it succeeded. */
static int openssl(const char *args) {
    char command[1024];
    snprintf(command, sizeof command, "cd %s && openssl %s >/dev/null 2>&1", dir, args);
    return system(command) == 0;
}

static int make_pki(void) {
    const char *ec = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    char args[512];
    snprintf(args, sizeof args,
             "req -x509 %s -keyout ca.key -out ca.pem -days 2 -subj '/CN=ferromcp C test CA' "
             "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign",
             ec);
    if (!openssl(args)) {
        return 0;
    }
    snprintf(args, sizeof args, "req %s -keyout server.key -out server.csr -subj /CN=localhost", ec);
    if (!openssl(args)) {
        return 0;
    }
    char path[128];
    snprintf(path, sizeof path, "%s/ext.cnf", dir);
    FILE *ext = fopen(path, "w");
    if (ext == NULL) {
        return 0;
    }
    fputs("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
          "basicConstraints=CA:FALSE\n",
          ext);
    fclose(ext);
    return openssl("x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial "
                   "-out server.pem -days 2 -extfile ext.cnf");
}

/* The file's text as a JSON string literal (quotes included), malloc'd. */
static char *json_string_of_file(const char *name) {
    char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return NULL;
    }
    char *out = malloc(16384);
    size_t n = 0;
    out[n++] = '"';
    int c;
    while ((c = fgetc(f)) != EOF && n < 16000) {
        if (c == '\n') {
            out[n++] = '\\';
            out[n++] = 'n';
        } else {
            out[n++] = (char)c;
        }
    }
    fclose(f);
    out[n++] = '"';
    out[n] = '\0';
    return out;
}

static void hello(void *userdata, const char *args, size_t args_len, ferromcp_call *call) {
    (void)userdata;
    (void)args;
    (void)args_len;
    CHECK_STATUS(ferromcp_call_respond(call, "\"hi over tls\""), FERROMCP_OK);
}

struct serving {
    ferromcp_server *server;
    const char *options;
    ferromcp_status status;
};

static void *serve(void *arg) {
    struct serving *s = arg;
    s->status = ferromcp_server_serve_http_ex(s->server, "127.0.0.1", 0, s->options);
    return NULL;
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/ferromcp-c-tls-%ld", (long)getpid());
    char command[128];
    snprintf(command, sizeof command, "mkdir -p %s", dir);
    if (system(command) != 0 || !make_pki()) {
        fprintf(stderr, "test_server_tls: cannot make certificates (is openssl installed?)\n");
        return 1;
    }
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("tls-server", "1.0.0", &server), FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool_ex(server, "hello", "answers", "{\"type\":\"object\"}",
                                             NULL, 0, hello, NULL, NULL),
                 FERROMCP_OK);

    /* A settings mistake, and a missing file: refused, nothing served. */
    CHECK_STATUS(ferromcp_server_serve_http_ex(server, "127.0.0.1", 0,
                                               "{\"tls\":{\"certFile\":\"x.pem\"}}"),
                 FERROMCP_INVALID_JSON);
    CHECK(strstr(ferromcp_last_error_message(), "keyFile") != NULL);
    CHECK_STATUS(ferromcp_server_serve_http_ex(
                     server, "127.0.0.1", 0,
                     "{\"tls\":{\"certFile\":\"/nowhere/cert.pem\",\"keyFile\":\"/nowhere/key.pem\"}}"),
                 FERROMCP_HTTP);
    CHECK(strstr(ferromcp_last_error_message(), "/nowhere/cert.pem") != NULL);

    char options[512];
    snprintf(options, sizeof options,
             "{\"tls\":{\"certFile\":\"%s/server.pem\",\"keyFile\":\"%s/server.key\"}}", dir, dir);
    struct serving s = {.server = server, .options = options, .status = FERROMCP_INTERNAL};
    pthread_t thread;
    CHECK(pthread_create(&thread, NULL, serve, &s) == 0);
    uint16_t port = 0;
    for (int i = 0; i < 500 && ferromcp_server_http_port(server, &port) != FERROMCP_OK; i++) {
        sleep_ms(20);
    }
    CHECK(port != 0);

    char *ca = json_string_of_file("ca.pem");
    CHECK(ca != NULL);
    char client_options[20000];
    snprintf(client_options, sizeof client_options,
             "{\"name\":\"c-tls\",\"version\":\"1\",\"tlsRoots\":\"none\",\"caCerts\":[%s]}",
             ca != NULL ? ca : "\"\"");
    free(ca);
    ferromcp_client_options *copts = NULL;
    CHECK_STATUS(ferromcp_client_options_new(client_options, &copts), FERROMCP_OK);
    char url[64];
    snprintf(url, sizeof url, "https://127.0.0.1:%u/mcp", (unsigned)port);
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_http(url, NULL, copts, &client), FERROMCP_OK);
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "hello", NULL, 0, NULL, NULL, NULL, &result), FERROMCP_OK);
    CHECK(result != NULL && strstr(result, "hi over tls") != NULL);
    ferromcp_string_free(result);
    ferromcp_client_free(client);

    /* Without the CA: a TLS refusal, no answer. */
    client = NULL;
    ferromcp_client_options *untrusting = NULL;
    CHECK_STATUS(ferromcp_client_options_new("{\"tlsRoots\":\"webpki\"}", &untrusting), FERROMCP_OK);
    ferromcp_status refused = ferromcp_client_connect_http(url, NULL, untrusting, &client);
    if (refused == FERROMCP_OK) {
        result = NULL;
        refused = ferromcp_client_call_tool(client, "hello", NULL, 0, NULL, NULL, NULL, &result);
        ferromcp_string_free(result);
        ferromcp_client_free(client);
    }
    CHECK(refused == FERROMCP_HTTP);
    ferromcp_client_options_free(untrusting);
    ferromcp_client_options_free(copts);

    CHECK_STATUS(ferromcp_server_shutdown(server), FERROMCP_OK);
    pthread_join(thread, NULL);
    CHECK_STATUS(s.status, FERROMCP_OK);
    ferromcp_server_free(server);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    CHECK(system(command) == 0);
    return check_report("test_server_tls");
}
