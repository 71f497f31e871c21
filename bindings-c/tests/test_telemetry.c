/* OpenTelemetry from C, turned on by the standard variables alone: a tool
 * reads the trace context it is served under (ferromcp_context_traceparent():
 * the server span's, a child of what the caller put in params._meta, or of
 * the client's own span), and ferromcp_telemetry_flush() reports a
 * collector that took nothing. The spans' content is checked against a
 * collector by core/tests/telemetry.rs and the Python tests. Run from the
 * repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <stdlib.h>

#include "check.h"

#define SENT_TRACE "4bf92f3577b34da6a3ce929d0e0e4736"
#define SENT_PARENT "00-" SENT_TRACE "-00f067aa0ba902b7-01"

/* Answers with the traceparent its request is served under. */
static void trace(void *userdata, const char *arguments_json, size_t arguments_len,
                  ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    char *parent = NULL;
    ferromcp_status status = ferromcp_context_traceparent(ferromcp_call_context(call), &parent);
    char answer[128];
    snprintf(answer, sizeof answer, "\"%s\"", status == FERROMCP_OK ? parent : "none");
    ferromcp_string_free(parent);
    CHECK_STATUS(ferromcp_call_respond(call, answer), FERROMCP_OK);
}

/* The text the tool answered. */
static char *served_under(ferromcp_client *client, const char *params) {
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_request(client, "tools/call", params, 10000, NULL, NULL, NULL,
                                         &result),
                 FERROMCP_OK);
    char *text = NULL;
    CHECK_STATUS(ferromcp_json_get(result, "/content/0/text", &text), FERROMCP_OK);
    ferromcp_string_free(result);
    return text;
}

int main(void) {
    /* Read once, when the first server or client is made. Port 9
     * (discard) refuses: the collector takes nothing. */
    setenv("OTEL_TRACES_EXPORTER", "otlp", 1);
    setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9", 1);
    setenv("OTEL_BSP_SCHEDULE_DELAY", "50", 1);

    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("traced", "1.0.0", &server), FERROMCP_OK);
    if (server == NULL) {
        return check_report("test_telemetry");
    }
    CHECK_STATUS(ferromcp_server_add_tool(server, "trace", "Its trace context",
                                          "{\"type\":\"object\"}", NULL, trace, NULL, NULL),
                 FERROMCP_OK);
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, NULL, &client), FERROMCP_OK);
    if (client == NULL) {
        return check_report("test_telemetry");
    }

    /* The caller's context: the server span is in its trace, with a span
     * of its own (the client span sits between). */
    char *under = served_under(client, "{\"name\":\"trace\",\"arguments\":{},"
                                       "\"_meta\":{\"traceparent\":\"" SENT_PARENT "\"}}");
    CHECK(under != NULL && strlen(under) == 55);
    CHECK(under != NULL && strncmp(under, "00-" SENT_TRACE "-", 36) == 0);
    CHECK(under != NULL && strcmp(under, SENT_PARENT) != 0);
    ferromcp_string_free(under);

    /* No context sent: the client span starts a trace, the server span
     * joins it. */
    char *first = served_under(client, "{\"name\":\"trace\",\"arguments\":{}}");
    char *second = served_under(client, "{\"name\":\"trace\",\"arguments\":{}}");
    CHECK(first != NULL && strncmp(first, "00-", 3) == 0 && strlen(first) == 55);
    CHECK(first != NULL && strncmp(first, "00-" SENT_TRACE, 35) != 0);
    /* Each call is a trace of its own. */
    CHECK(first != NULL && second != NULL && strncmp(first, second, 35) != 0);
    ferromcp_string_free(first);
    ferromcp_string_free(second);

    CHECK_STATUS(ferromcp_context_traceparent(NULL, &first), FERROMCP_NULL_ARGUMENT);
    /* Nothing reached a collector. */
    CHECK_STATUS(ferromcp_telemetry_flush(5000), FERROMCP_TIMEOUT);

    ferromcp_client_free(client);
    ferromcp_server_free(server);
    return check_report("test_telemetry");
}
