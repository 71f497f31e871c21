/* The ferromcp C row of the client benchmark: ferromcp_client_call_tool()
 * (the blocking call) on one client connected over Streamable HTTP, calling
 * echo; N threads for N calls in flight. Driven by mcp-bench through the
 * line protocol of bench/src/clients.rs: `ready <version>`, then for each
 * `run <in-flight> <seconds>` line `done <ok> <errors> <seconds>` (`error
 * <message>` first when a call failed); stdin's end ends it.
 *
 *   target/bin/bench-client-c http://127.0.0.1:PORT/mcp
 *
 * Built by bench/bench.mk against the optimised libferromcp.a. */

#define _POSIX_C_SOURCE 200809L
#include <ferromcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct ferromcp_client *client;
static atomic_ullong next_text;
static atomic_ullong ok_count;
static atomic_ullong error_count;
static pthread_mutex_t first_error_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_error[512];
static double deadline;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fail(const char *why) {
    atomic_fetch_add(&error_count, 1);
    pthread_mutex_lock(&first_error_lock);
    if (first_error[0] == '\0') {
        snprintf(first_error, sizeof first_error, "%s", why);
        for (char *c = first_error; *c; c++) {
            if (*c == '\n') *c = ' ';
        }
    }
    pthread_mutex_unlock(&first_error_lock);
}

/* One call with its own text; 0 when the reply echoed it. */
static int echo_once(const char *text) {
    char arguments[96];
    snprintf(arguments, sizeof arguments, "{\"text\":\"%s\"}", text);
    char *result = NULL;
    enum ferromcp_status status =
        ferromcp_client_call_tool(client, "echo", arguments, 0, NULL, NULL, NULL, &result);
    if (status != FERROMCP_OK) {
        char why[400];
        snprintf(why, sizeof why, "call failed: %s", ferromcp_last_error_message());
        fail(why);
        return -1;
    }
    char *got = NULL;
    int rc = -1;
    if (ferromcp_json_get(result, "/content/0/text", &got) == FERROMCP_OK && strcmp(got, text) == 0) {
        rc = 0;
    } else {
        char why[400];
        snprintf(why, sizeof why, "wrong reply for %s: %.300s", text, result);
        fail(why);
    }
    ferromcp_string_free(got);
    ferromcp_string_free(result);
    return rc;
}

static void *worker(void *unused) {
    (void)unused;
    char text[48];
    while (now() < deadline) {
        snprintf(text, sizeof text, "hello-%llu", (unsigned long long)atomic_fetch_add(&next_text, 1));
        if (echo_once(text) == 0) atomic_fetch_add(&ok_count, 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s URL\n", argv[0]);
        return 2;
    }
    struct ferromcp_client *connected = NULL;
    if (ferromcp_client_connect_http(argv[1], NULL, NULL, &connected) != FERROMCP_OK) {
        printf("error cannot connect: %s\n", ferromcp_last_error_message());
        return 1;
    }
    client = connected;
    if (echo_once("ready?") != 0) {
        printf("error first call: %s\n", first_error);
        ferromcp_client_free(connected);
        return 1;
    }
    char *version = NULL;
    ferromcp_client_protocol_version(client, &version);
    printf("ready %s\n", version ? version : "?");
    fflush(stdout);
    ferromcp_string_free(version);

    char line[128];
    while (fgets(line, sizeof line, stdin) != NULL) {
        unsigned in_flight = 0;
        double seconds = 0;
        if (sscanf(line, "run %u %lf", &in_flight, &seconds) != 2) continue;
        if (in_flight < 1) in_flight = 1;
        atomic_store(&ok_count, 0);
        atomic_store(&error_count, 0);
        first_error[0] = '\0';
        double started = now();
        deadline = started + seconds;
        if (in_flight == 1) {
            worker(NULL);
        } else {
            pthread_t *threads = calloc(in_flight, sizeof *threads);
            if (threads == NULL) return 1;
            for (unsigned i = 0; i < in_flight; i++) pthread_create(&threads[i], NULL, worker, NULL);
            for (unsigned i = 0; i < in_flight; i++) pthread_join(threads[i], NULL);
            free(threads);
        }
        double elapsed = now() - started;
        if (first_error[0] != '\0') printf("error %s\n", first_error);
        printf("done %llu %llu %.6f\n", (unsigned long long)atomic_load(&ok_count),
               (unsigned long long)atomic_load(&error_count), elapsed);
        fflush(stdout);
    }
    ferromcp_client_free(connected);
    return 0;
}
