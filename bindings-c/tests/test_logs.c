/* Core's log events reach C through ferromcp_set_log_callback(): a failed
 * telemetry export (the collector's port refuses) is a warning the callback
 * gets with its source and fields; once removed, nothing more arrives. Run
 * from the repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdlib.h>

#include "check.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int warnings = 0;
static int export_failures = 0;
static int below_warn = 0;

static void collect(void *userdata, enum ferromcp_log_level level, const char *target,
                    const char *message) {
    CHECK(userdata == (void *)&lock);
    pthread_mutex_lock(&lock);
    if (level == FERROMCP_LOG_WARN) {
        warnings++;
    }
    if (level > FERROMCP_LOG_WARN) {
        below_warn++;
    }
    if (strstr(target, "telemetry") != NULL &&
        strstr(message, "OpenTelemetry export failed") != NULL && strstr(message, "url=") != NULL) {
        export_failures++;
    }
    pthread_mutex_unlock(&lock);
}

static int read_count(int *count) {
    pthread_mutex_lock(&lock);
    int value = *count;
    pthread_mutex_unlock(&lock);
    return value;
}

static void echo(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_respond(call, "\"hi\""), FERROMCP_OK);
}

/* One traced call, then a flush the collector refuses. */
static void traced_call(ferromcp_client *client) {
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "echo", "{}", 10000, NULL, NULL, NULL, &result),
                 FERROMCP_OK);
    ferromcp_string_free(result);
    CHECK_STATUS(ferromcp_telemetry_flush(5000), FERROMCP_TIMEOUT);
}

int main(void) {
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9", 1);
    CHECK_STATUS(ferromcp_set_log_callback(collect, &lock, FERROMCP_LOG_WARN), FERROMCP_OK);

    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("logged", "1.0.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return check_report("test_logs");
    }
    CHECK_STATUS(ferromcp_server_add_tool(server, "echo", "hi", "{\"type\":\"object\"}", NULL, echo,
                                          NULL, NULL),
                 FERROMCP_OK);
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, NULL, &client), FERROMCP_OK);
    if (client == NULL) {
        return check_report("test_logs");
    }

    traced_call(client);
    CHECK(read_count(&export_failures) >= 1);
    CHECK(read_count(&warnings) >= 1);
    CHECK(read_count(&below_warn) == 0);

    /* Removed: the next failure is not heard. */
    CHECK_STATUS(ferromcp_set_log_callback(NULL, NULL, FERROMCP_LOG_WARN), FERROMCP_OK);
    int before = read_count(&export_failures);
    traced_call(client);
    CHECK(read_count(&export_failures) == before);

    ferromcp_client_free(client);
    ferromcp_server_free(server);
    return check_report("test_logs");
}
