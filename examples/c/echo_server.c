/*
 * The walking-skeleton example in C: a server "ferromcp-echo" 1.0.0 with the
 * tools `echo` and `add`, served over stdio, or with `--http PORT` over
 * Streamable HTTP at http://127.0.0.1:PORT/mcp.
 *
 *   echo-server-c              # stdio
 *   echo-server-c --http 8000  # HTTP; stop with Ctrl-C or SIGTERM
 *   echo-server-c --blocking [--http 8000]
 *
 * --blocking registers the tools without FERROMCP_TOOL_NONBLOCKING, so the
 * callbacks run on ferromcp's host threads, as callbacks that may block
 * must (the benchmark's ferromcp-c-blocking row measures that mode).
 *
 * ferromcp validates every call's arguments against the tool's input schema
 * before the callback runs, and hands them over as compact JSON. The
 * callbacks below still read them with a small bounds-checked scanner that
 * fails the call (instead of crashing) on anything unexpected, because a C
 * program should never trust text it did not produce.
 */

/* sigaction() is POSIX, not C11. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferromcp.h"

/* ---- a minimal JSON scanner: finds a top-level member of an object ---- */

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
        p++;
    }
    return p;
}

/* p points at '"'; returns the position after the closing quote, or NULL. */
static const char *skip_string(const char *p, const char *end) {
    for (p++; p < end; p++) {
        if (*p == '\\') {
            /* skip the escaped character (\uXXXX needs no special case) */
            if (++p >= end) {
                return NULL;
            }
        } else if (*p == '"') {
            return p + 1;
        }
    }
    return NULL;
}

/* Returns the position after the JSON value at p, or NULL if malformed. */
static const char *skip_value(const char *p, const char *end) {
    if (p >= end) {
        return NULL;
    }
    if (*p == '"') {
        return skip_string(p, end);
    }
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = skip_string(p, end);
                if (p == NULL) {
                    return NULL;
                }
                continue;
            }
            if (*p == '{' || *p == '[') {
                depth++;
            } else if (*p == '}' || *p == ']') {
                if (--depth == 0) {
                    return p + 1;
                }
            }
            p++;
        }
        return NULL;
    }
    /* number, true, false, null */
    const char *start = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\t' &&
           *p != '\n' && *p != '\r') {
        p++;
    }
    return p > start ? p : NULL;
}

/*
 * Finds member `key` (a plain key without escapes) of the JSON object in
 * json[0..len). On success points value at the raw value text, of value_len bytes.
 */
static bool find_member(const char *json, size_t len, const char *key, const char **value,
                        size_t *value_len) {
    const char *end = json + len;
    const char *p = skip_ws(json, end);
    size_t key_len = strlen(key);
    if (p >= end || *p != '{') {
        return false;
    }
    p = skip_ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *key_end = skip_string(p, end);
        if (key_end == NULL) {
            return false;
        }
        bool match = (size_t)(key_end - p - 2) == key_len && memcmp(p + 1, key, key_len) == 0;
        p = skip_ws(key_end, end);
        if (p >= end || *p != ':') {
            return false;
        }
        p = skip_ws(p + 1, end);
        const char *value_end = skip_value(p, end);
        if (value_end == NULL) {
            return false;
        }
        if (match) {
            *value = p;
            *value_len = (size_t)(value_end - p);
            return true;
        }
        p = skip_ws(value_end, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
        }
    }
    return false;
}

/* Parses a JSON integer token that fits in int64_t (no fraction/exponent). */
static bool parse_int64(const char *text, size_t len, int64_t *out) {
    char buf[32];
    if (len == 0 || len >= sizeof buf) {
        return false;
    }
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *parsed_end = NULL;
    errno = 0;
    long long v = strtoll(buf, &parsed_end, 10);
    if (errno != 0 || parsed_end != buf + len) {
        return false;
    }
    *out = (int64_t)v;
    return true;
}

/* ---- the tools ---- */

/* Returns the text unchanged: the raw JSON string token is already a valid
 * JSON value, so it is passed back without unescaping and re-escaping. */
static void echo_tool(void *userdata, const char *arguments_json, size_t arguments_len,
                      ferromcp_call *call) {
    (void)userdata;
    const char *text = NULL;
    size_t text_len = 0;
    if (!find_member(arguments_json, arguments_len, "text", &text, &text_len) ||
        text[0] != '"') {
        ferromcp_call_fail(call, "text must be a string");
        return;
    }
    char *result = malloc(text_len + 1);
    if (result == NULL) {
        ferromcp_call_fail(call, "out of memory");
        return;
    }
    memcpy(result, text, text_len);
    result[text_len] = '\0';
    ferromcp_call_respond(call, result);
    free(result);
}

/* Adds two integers and returns the sum as a plain value; with the output
 * schema, ferromcp reports it as structuredContent {"result": sum}. */
static void add_tool(void *userdata, const char *arguments_json, size_t arguments_len,
                     ferromcp_call *call) {
    (void)userdata;
    const char *a_text = NULL;
    const char *b_text = NULL;
    size_t a_len = 0;
    size_t b_len = 0;
    int64_t a = 0;
    int64_t b = 0;
    if (!find_member(arguments_json, arguments_len, "a", &a_text, &a_len) ||
        !find_member(arguments_json, arguments_len, "b", &b_text, &b_len) ||
        !parse_int64(a_text, a_len, &a) || !parse_int64(b_text, b_len, &b)) {
        ferromcp_call_fail(call, "a and b must be integers");
        return;
    }
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) {
        ferromcp_call_fail(call, "the sum does not fit in 64 bits");
        return;
    }
    char result[32];
    snprintf(result, sizeof result, "%lld", (long long)(a + b));
    ferromcp_call_respond(call, result);
}

/* ---- main ---- */

static ferromcp_server *g_server = NULL;

/* ferromcp_server_shutdown is async-signal-safe: the serve call then returns. */
static void on_signal(int signo) {
    (void)signo;
    ferromcp_server_shutdown(g_server);
}

static int fail(const char *what, ferromcp_status status) {
    fprintf(stderr, "echo-server-c: %s: %s (%s)\n", what, ferromcp_status_message(status),
            ferromcp_last_error_message());
    return 1;
}

int main(int argc, char **argv) {
    long port = -1;
    bool blocking = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--blocking") == 0) {
            blocking = true;
        } else if (strcmp(argv[i], "--http") == 0 && i + 1 < argc && port < 0) {
            char *end = NULL;
            const char *text = argv[++i];
            port = strtol(text, &end, 10);
            if (*text == '\0' || *end != '\0' || port < 0 || port > 65535) {
                fprintf(stderr, "echo-server-c: invalid port \"%s\"\n", text);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: echo-server-c [--blocking] [--http PORT]\n");
            return 2;
        }
    }

    ferromcp_status status = ferromcp_server_new("ferromcp-echo", "1.0.0", &g_server);
    if (status != FERROMCP_OK) {
        return fail("creating the server", status);
    }
    /* Both callbacks answer at once and never block, so they may run on
     * ferromcp's own threads (FERROMCP_TOOL_NONBLOCKING), which saves two
     * thread switches per call; --blocking shows the default mode, where
     * they run on host threads and may block. */
    uint32_t flags = blocking ? 0 : FERROMCP_TOOL_NONBLOCKING;
    status = ferromcp_server_add_tool_ex(
        g_server, "echo", "Returns the text unchanged.",
        "{\"type\":\"object\",\"properties\":{\"text\":{\"type\":\"string\"}},"
        "\"required\":[\"text\"]}",
        NULL, flags, echo_tool, NULL, NULL);
    if (status == FERROMCP_OK) {
        status = ferromcp_server_add_tool_ex(
            g_server, "add", "Adds two integers.",
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},"
            "\"b\":{\"type\":\"integer\"}},\"required\":[\"a\",\"b\"]}",
            "{\"type\":\"object\",\"properties\":{\"result\":{\"type\":\"integer\"}},"
            "\"required\":[\"result\"]}",
            flags, add_tool, NULL, NULL);
    }
    if (status != FERROMCP_OK) {
        ferromcp_server_free(g_server);
        return fail("adding the tools", status);
    }

    /* SIGINT/SIGTERM: a graceful shutdown, on either transport. */
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    if (port >= 0) {
        fprintf(stderr, "echo-server-c: serving on http://127.0.0.1:%ld/mcp\n", port);
        status = ferromcp_server_serve_http(g_server, "127.0.0.1", (uint16_t)port);
    } else {
        status = ferromcp_server_serve_stdio(g_server);
    }
    int exit_code = 0;
    if (status == FERROMCP_CONNECTION_CLOSED && port < 0) {
        /* The client closed our stdout: its session is over. */
        fprintf(stderr, "echo-server-c: the client closed stdout; stopped serving\n");
    } else if (status != FERROMCP_OK) {
        exit_code = fail("serving", status);
    }
    /* No handler may touch the server once it is freed. */
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    ferromcp_server_free(g_server);
    return exit_code;
}
