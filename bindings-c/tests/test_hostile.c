/* The C client against a misbehaving server (target/bin/hostile-server,
 * built by `make build`; the Rust, Python and Node client tests start it
 * too): the "limits" option, a progress flood that never holds back the
 * result, an endless SSE event refused naming its limit, a response with
 * another id refused, stderr without a newline, a ping flood answered on a
 * bounded number of connections, and the negotiated protocol version of a
 * 2025-11-25 connection. Run from the repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define HOSTILE "target/bin/hostile-server"

/* ---- the hostile server over HTTP ---- */

struct hostile {
    pid_t pid;
    char url[64];
};

/* Starts `HOSTILE mode --http 0 [extra]` and reads the port it prints. */
static bool hostile_start(struct hostile *h, const char *mode, const char *count) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        if (count != NULL) {
            execl(HOSTILE, HOSTILE, mode, "--http", "0", "--count", count, (char *)NULL);
        } else {
            execl(HOSTILE, HOSTILE, mode, "--http", "0", (char *)NULL);
        }
        _exit(127);
    }
    close(fds[1]);
    char line[64] = {0};
    size_t used = 0;
    while (used + 1 < sizeof line) {
        ssize_t n = read(fds[0], line + used, 1);
        if (n <= 0 || line[used] == '\n') break;
        used += (size_t)n;
    }
    close(fds[0]);
    line[used] = '\0';
    const char *port = strrchr(line, ' ');
    h->pid = pid;
    snprintf(h->url, sizeof h->url, "http://127.0.0.1:%s/mcp", port ? port + 1 : "0");
    return port != NULL;
}

static void hostile_stop(struct hostile *h) {
    kill(h->pid, SIGKILL);
    waitpid(h->pid, NULL, 0);
}

static ferromcp_client *connect_http(const char *url, const char *options_json) {
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new(options_json, &options), FERROMCP_OK);
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_http(url, NULL, options, &client), FERROMCP_OK);
    ferromcp_client_options_free(options);
    return client;
}

static char *first_text(const char *result) {
    char *text = NULL;
    return ferromcp_json_get(result, "/content/0/text", &text) == FERROMCP_OK ? text : NULL;
}

/* ---- progress ---- */

struct progress_seen {
    long calls;
    double last;
};

static void on_progress(void *userdata, double progress, double total, const char *message) {
    (void)total;
    (void)message;
    struct progress_seen *seen = userdata;
    seen->calls++;
    seen->last = progress;
}

static void test_limits_option_is_checked(void) {
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new("{\"limits\":{\"bogus\":1}}", &options),
                 FERROMCP_INVALID_JSON);
    CHECK_CONTAINS(ferromcp_last_error_message(), "bogus");
    CHECK(options == NULL);
    CHECK_STATUS(ferromcp_client_options_new("{\"limits\":{\"maxMessageBytes\":-1}}", &options),
                 FERROMCP_INVALID_JSON);
    CHECK_STATUS(ferromcp_client_options_new(
                     "{\"limits\":{\"maxMessageBytes\":1048576,\"maxQueuedNotifications\":64}}",
                     &options),
                 FERROMCP_OK);
    ferromcp_client_options_free(options);
}

static void test_progress_flood_over_stdio(void) {
    const char *args[] = {"progress-flood", "--count", "20000", NULL};
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_stdio(HOSTILE, args, NULL, NULL, NULL, &client),
                 FERROMCP_OK);
    if (client == NULL) return;
    struct progress_seen seen = {0, 0};
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "flood", NULL, 120000, on_progress, &seen,
                                           NULL, &result),
                 FERROMCP_OK);
    char *text = result ? first_text(result) : NULL;
    CHECK(text != NULL && strcmp(text, "done") == 0);
    CHECK(seen.last == 20000.0);
    CHECK(seen.calls >= 1 && seen.calls <= 20000);
    ferromcp_string_free(text);
    ferromcp_string_free(result);
    ferromcp_client_free(client);
}

static void test_stderr_flood_over_stdio(void) {
    const char *args[] = {"stderr-flood", NULL};
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_stdio(HOSTILE, args, NULL, NULL, NULL, &client),
                 FERROMCP_OK);
    if (client == NULL) return;
    for (int i = 0; i < 5; i++) {
        char *result = NULL;
        CHECK_STATUS(ferromcp_client_call_tool(client, "flood", NULL, 60000, NULL, NULL, NULL,
                                               &result),
                     FERROMCP_OK);
        ferromcp_string_free(result);
        sleep_ms(100);
    }
    ferromcp_client_free(client);
}

static void test_endless_sse_and_wrong_id(void) {
    struct hostile h;
    CHECK(hostile_start(&h, "endless-sse", NULL));
    ferromcp_client *client = connect_http(h.url, "{\"limits\":{\"maxMessageBytes\":1048576}}");
    if (client != NULL) {
        char *result = NULL;
        CHECK(ferromcp_client_call_tool(client, "flood", NULL, 60000, NULL, NULL, NULL, &result) !=
              FERROMCP_OK);
        CHECK(result == NULL);
        CHECK_CONTAINS(ferromcp_last_error_message(), "1048576-byte limit (max_message_bytes)");
        ferromcp_client_free(client);
    }
    hostile_stop(&h);

    CHECK(hostile_start(&h, "wrong-id", NULL));
    client = connect_http(h.url, NULL);
    if (client != NULL) {
        char *result = NULL;
        CHECK(ferromcp_client_call_tool(client, "flood", NULL, 60000, NULL, NULL, NULL, &result) !=
              FERROMCP_OK);
        CHECK(result == NULL);
        CHECK_CONTAINS(ferromcp_last_error_message(), "not request");
        ferromcp_client_free(client);
    }
    hostile_stop(&h);
}

static void test_ping_flood_and_legacy_version(void) {
    struct hostile h;
    CHECK(hostile_start(&h, "ping-flood", "2000"));
    ferromcp_client *client = connect_http(h.url, NULL);
    if (client != NULL) {
        char *text = NULL;
        CHECK_STATUS(ferromcp_client_list(client, FERROMCP_LIST_TOOLS, NULL, &text), FERROMCP_OK);
        ferromcp_string_free(text);
        char *version = NULL;
        CHECK_STATUS(ferromcp_client_protocol_version(client, &version), FERROMCP_OK);
        CHECK(version != NULL && strcmp(version, "2025-11-25") == 0);
        ferromcp_string_free(version);
        char *answered = NULL;
        char *connections = NULL;
        for (int i = 0; i < 300; i++) {
            char *result = NULL;
            CHECK_STATUS(ferromcp_client_call_tool(client, "stats", NULL, 60000, NULL, NULL, NULL,
                                                   &result),
                         FERROMCP_OK);
            char *stats = result ? first_text(result) : NULL;
            ferromcp_string_free(answered);
            ferromcp_string_free(connections);
            answered = NULL;
            connections = NULL;
            if (stats != NULL) {
                CHECK_STATUS(ferromcp_json_get(stats, "/answered", &answered), FERROMCP_OK);
                CHECK_STATUS(ferromcp_json_get(stats, "/maxConnections", &connections),
                             FERROMCP_OK);
            }
            ferromcp_string_free(stats);
            ferromcp_string_free(result);
            if (answered != NULL && strcmp(answered, "2000") == 0) break;
            sleep_ms(200);
        }
        CHECK(answered != NULL && strcmp(answered, "2000") == 0);
        /* The GET stream, the stats call and at most 4 answers at once. */
        CHECK(connections != NULL && atoi(connections) <= 7);
        ferromcp_string_free(answered);
        ferromcp_string_free(connections);
        ferromcp_client_free(client);
    }
    hostile_stop(&h);
}

int main(void) {
    test_limits_option_is_checked();
    test_progress_flood_over_stdio();
    test_stderr_flood_over_stdio();
    test_endless_sse_and_wrong_id();
    test_ping_flood_and_legacy_version();
    return check_report("test_hostile");
}
