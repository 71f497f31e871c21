/* The conformance fixture server in C: every tool, resource, prompt and
 * completion the official MCP conformance suite calls, on the ferromcp C
 * API (the Rust twin is examples/rust/src/bin/everything-server.rs).
 *
 * Every callback runs on a ferromcp host thread and may block: asks for
 * input (ferromcp_context_elicit and friends) block until the client
 * answers in a 2025-11-25 session, and under 2026-07-28 return either the
 * answer the retried request carries or FERROMCP_INPUT_REQUIRED, after
 * which the callback completes its call and returns (see fail_after). The
 * same code serves both.
 *
 * Usage, from the repository root after `make build-c`:
 *   target/bin/everything-server-c PORT      http://127.0.0.1:PORT/mcp
 *   target/bin/everything-server-c --stdio
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ferromcp.h"

#define PNG_BASE64                                                                         \
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5E" \
    "rkJggg=="
#define WAV_BASE64 "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA="
#define NO_ARGS "{\"type\":\"object\",\"properties\":{}}"

static ferromcp_server *g_server = NULL;

/* ---- small helpers: formatting, JSON text, reading answers ---- */

static void sleep_ms(long ms) {
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* printf into a new heap string (NULL when out of memory). */
static char *format(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    int n = vsnprintf(NULL, 0, fmt, args);
    va_end(args);
    if (n < 0) {
        return NULL;
    }
    char *text = malloc((size_t)n + 1);
    if (text != NULL) {
        va_start(args, fmt);
        vsnprintf(text, (size_t)n + 1, fmt, args);
        va_end(args);
    }
    return text;
}

/* `text` as a JSON string literal, in a new heap string. */
static char *json_quote(const char *text) {
    size_t len = strlen(text);
    char *out = malloc(len * 6 + 3);
    if (out == NULL) {
        return NULL;
    }
    char *p = out;
    *p++ = '"';
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s == '"' || *s == '\\') {
            *p++ = '\\';
            *p++ = (char)*s;
        } else if (*s < 0x20) {
            p += sprintf(p, "\\u%04x", *s);
        } else {
            *p++ = (char)*s;
        }
    }
    *p++ = '"';
    *p = '\0';
    return out;
}

/* Answers with one text content block; takes ownership of `text`. */
static void respond_text(ferromcp_call *call, char *text) {
    char *quoted = text == NULL ? NULL : json_quote(text);
    if (quoted == NULL) {
        ferromcp_call_fail(call, "out of memory");
    } else {
        ferromcp_call_respond(call, quoted);
    }
    free(quoted);
    free(text);
}

/* The value at `pointer` in `json` (a string's text, else JSON text), or a
 * copy of `fallback`. Free it with ferromcp_string_free... or free(): this
 * helper always returns malloc'd memory so callers free one way. */
static char *get(const char *json, const char *pointer, const char *fallback) {
    char *value = NULL;
    if (ferromcp_json_get(json, pointer, &value) != FERROMCP_OK) {
        return format("%s", fallback);
    }
    char *copy = format("%s", value);
    ferromcp_string_free(value);
    return copy;
}

/* The text of a sampling answer: its content is one block or a list. */
static char *text_of(const char *answer) {
    char *value = NULL;
    if (ferromcp_json_get(answer, "/content/text", &value) != FERROMCP_OK &&
        ferromcp_json_get(answer, "/content/0/text", &value) != FERROMCP_OK) {
        return format("%s", "");
    }
    char *copy = format("%s", value);
    ferromcp_string_free(value);
    return copy;
}

/* Completes `call` after an ask did not give an answer: a 2026-07-28 round
 * waits for the client (any outcome is discarded), a JSON-RPC error of the
 * client (or a missing capability, -32021) is passed on as is, and
 * anything else is a tool error. */
static void fail_after(ferromcp_call *call, ferromcp_status status) {
    if (status == FERROMCP_INPUT_REQUIRED) {
        ferromcp_call_fail(call, "waiting for the client's input");
    } else if (status == FERROMCP_PEER_ERROR) {
        ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(), ferromcp_last_error_message(),
                                   ferromcp_last_error_data_json());
    } else {
        ferromcp_call_fail(call, ferromcp_last_error_message());
    }
}

#define UNUSED_TOOL_ARGS \
    (void)userdata;      \
    (void)args;          \
    (void)args_len

#define TOOL(fn) \
    static void fn(void *userdata, const char *args, size_t args_len, ferromcp_call *call)

/* ---- content ---- */

TOOL(simple_text) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_respond(call, "\"This is a simple text response for testing.\"");
}

TOOL(image_content) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_respond_result(
        call, "{\"content\":[{\"type\":\"image\",\"data\":\"" PNG_BASE64
              "\",\"mimeType\":\"image/png\"}]}");
}

TOOL(audio_content) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_respond_result(
        call, "{\"content\":[{\"type\":\"audio\",\"data\":\"" WAV_BASE64
              "\",\"mimeType\":\"audio/wav\"}]}");
}

TOOL(embedded_resource) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_respond_result(
        call, "{\"content\":[{\"type\":\"resource\",\"resource\":{"
              "\"uri\":\"test://embedded-resource\",\"mimeType\":\"text/plain\","
              "\"text\":\"This is an embedded resource content.\"}}]}");
}

TOOL(multiple_content_types) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_respond_result(
        call, "{\"content\":["
              "{\"type\":\"text\",\"text\":\"Multiple content types test:\"},"
              "{\"type\":\"image\",\"data\":\"" PNG_BASE64 "\",\"mimeType\":\"image/png\"},"
              "{\"type\":\"resource\",\"resource\":{\"uri\":\"test://mixed-content-resource\","
              "\"mimeType\":\"application/json\","
              "\"text\":\"{\\\"test\\\": \\\"data\\\", \\\"value\\\": 123}\"}}]}");
}

TOOL(error_handling) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_fail(call, "This tool intentionally returns an error for testing");
}

TOOL(tool_with_progress) {
    UNUSED_TOOL_ARGS;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    static const char *steps[] = {"step 1", "step 2", "step 3"};
    for (int i = 0; i < 3; i++) {
        if (i > 0) {
            sleep_ms(50);
        }
        ferromcp_context_progress(ctx, 50.0 * i, 100.0, steps[i], NULL);
    }
    ferromcp_call_respond(call, "\"Progress test completed\"");
}

TOOL(tool_with_logging) {
    UNUSED_TOOL_ARGS;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    static const char *messages[] = {"Tool execution started", "Tool processing data",
                                     "Tool execution completed"};
    for (int i = 0; i < 3; i++) {
        if (i > 0) {
            sleep_ms(50);
        }
        ferromcp_context_log(ctx, "info", "everything-server", messages[i], NULL);
    }
    ferromcp_call_respond(call, "\"Logging test completed\"");
}

TOOL(logging_tool) {
    UNUSED_TOOL_ARGS;
    bool sent = false;
    ferromcp_context_log(ferromcp_call_context(call), "info", NULL, "test_logging_tool ran", &sent);
    ferromcp_call_respond(call, sent ? "\"logged\"" : "\"no log level requested\"");
}

TOOL(json_schema_tool) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_respond(call, "\"ok\"");
}

TOOL(custom_header) {
    UNUSED_TOOL_ARGS;
    char *value = get(args, "/value", "");
    respond_text(call, value == NULL ? NULL : format("value: %s", value));
    free(value);
}

/* ---- asking the client ---- */

TOOL(sampling) {
    UNUSED_TOOL_ARGS;
    char *prompt = get(args, "/prompt", "");
    char *answer = NULL;
    ferromcp_status status =
        ferromcp_context_sample(ferromcp_call_context(call), NULL, prompt, 100, &answer);
    free(prompt);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *text = text_of(answer);
    ferromcp_string_free(answer);
    respond_text(call, format("LLM response: %s", text));
    free(text);
}

/* Elicits with `schema` and answers "<prefix>action=..., content=...". */
static void elicit_and_report(ferromcp_call *call, const char *message, const char *schema,
                              const char *prefix) {
    char *answer = NULL;
    ferromcp_status status =
        ferromcp_context_elicit(ferromcp_call_context(call), NULL, message, schema, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *action = get(answer, "/action", "");
    char *content = get(answer, "/content", "{}");
    ferromcp_string_free(answer);
    respond_text(call, format("%saction=%s, content=%s", prefix, action, content));
    free(action);
    free(content);
}

TOOL(elicitation) {
    UNUSED_TOOL_ARGS;
    char *message = get(args, "/message", "");
    elicit_and_report(call, message,
                      "{\"type\":\"object\",\"properties\":{"
                      "\"username\":{\"type\":\"string\",\"description\":\"User's response\"},"
                      "\"email\":{\"type\":\"string\",\"description\":\"User's email address\"}},"
                      "\"required\":[\"username\",\"email\"]}",
                      "User response: ");
    free(message);
}

TOOL(elicitation_defaults) {
    UNUSED_TOOL_ARGS;
    elicit_and_report(
        call, "Please review your profile",
        "{\"type\":\"object\",\"properties\":{"
        "\"name\":{\"type\":\"string\",\"default\":\"John Doe\"},"
        "\"age\":{\"type\":\"integer\",\"default\":30},"
        "\"score\":{\"type\":\"number\",\"default\":95.5},"
        "\"status\":{\"type\":\"string\",\"enum\":[\"active\",\"inactive\",\"pending\"],"
        "\"default\":\"active\"},"
        "\"verified\":{\"type\":\"boolean\",\"default\":true}}}",
        "Elicitation result: ");
}

TOOL(elicitation_enums) {
    UNUSED_TOOL_ARGS;
    elicit_and_report(
        call, "Choose your options",
        "{\"type\":\"object\",\"properties\":{"
        "\"untitledSingle\":{\"type\":\"string\",\"enum\":[\"option1\",\"option2\",\"option3\"]},"
        "\"titledSingle\":{\"type\":\"string\",\"oneOf\":["
        "{\"const\":\"value1\",\"title\":\"First Option\"},"
        "{\"const\":\"value2\",\"title\":\"Second Option\"},"
        "{\"const\":\"value3\",\"title\":\"Third Option\"}]},"
        "\"legacyEnum\":{\"type\":\"string\",\"enum\":[\"opt1\",\"opt2\",\"opt3\"],"
        "\"enumNames\":[\"Option One\",\"Option Two\",\"Option Three\"]},"
        "\"untitledMulti\":{\"type\":\"array\",\"items\":{\"type\":\"string\","
        "\"enum\":[\"option1\",\"option2\",\"option3\"]}},"
        "\"titledMulti\":{\"type\":\"array\",\"items\":{\"anyOf\":["
        "{\"const\":\"value1\",\"title\":\"First Choice\"},"
        "{\"const\":\"value2\",\"title\":\"Second Choice\"},"
        "{\"const\":\"value3\",\"title\":\"Third Choice\"}]}}}}",
        "Elicitation result: ");
}

TOOL(reconnection) {
    UNUSED_TOOL_ARGS;
    /* Only the legacy HTTP wire has resumable streams; elsewhere a no-op. */
    ferromcp_context_close_sse_stream(ferromcp_call_context(call), NULL);
    sleep_ms(100);
    ferromcp_call_respond(call, "\"Reconnection test completed\"");
}

TOOL(missing_capability) {
    UNUSED_TOOL_ARGS;
    char *answer = NULL;
    /* Without `sampling` this fails with -32021, passed on as is. */
    ferromcp_status status =
        ferromcp_context_sample(ferromcp_call_context(call), NULL, "Say hello", 100, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *text = text_of(answer);
    ferromcp_string_free(answer);
    respond_text(call, format("Sampled: %s", text));
    free(text);
}

#define NAME_SCHEMA \
    "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},\"required\":[\"name\"]}"
#define OK_SCHEMA "{\"type\":\"object\",\"properties\":{\"ok\":{\"type\":\"boolean\"}}}"

TOOL(streaming_elicitation) {
    UNUSED_TOOL_ARGS;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    ferromcp_context_log(ctx, "info", NULL, "about to ask for confirmation", NULL);
    char *answer = NULL;
    ferromcp_status status =
        ferromcp_context_elicit(ctx, "confirmation", "Continue?", OK_SCHEMA, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *action = get(answer, "/action", "");
    char *content = get(answer, "/content", "null");
    ferromcp_string_free(answer);
    respond_text(call, format("answer: %s %s", action, content));
    free(action);
    free(content);
}

/* ---- input_required rounds (2026-07-28) ---- */

TOOL(irr_elicitation) {
    UNUSED_TOOL_ARGS;
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(
        ferromcp_call_context(call), "user_name", "What is your name?", NAME_SCHEMA, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *action = get(answer, "/action", "");
    char *name = get(answer, "/content/name", "stranger");
    ferromcp_string_free(answer);
    respond_text(call, format("Hello, %s!", strcmp(action, "accept") == 0 ? name : "stranger"));
    free(action);
    free(name);
}

TOOL(irr_sampling) {
    UNUSED_TOOL_ARGS;
    char *answer = NULL;
    ferromcp_status status =
        ferromcp_context_sample(ferromcp_call_context(call), "capital_question",
                                "What is the capital of France?", 100, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *text = text_of(answer);
    ferromcp_string_free(answer);
    respond_text(call, format("The model answered: %s", text));
    free(text);
}

/* "uri1, uri2" from a ListRootsResult, in a new heap string. */
static char *root_uris(const char *roots) {
    char *joined = format("%s", "");
    for (int i = 0; joined != NULL; i++) {
        char pointer[32];
        char *uri = NULL;
        snprintf(pointer, sizeof pointer, "/roots/%d/uri", i);
        if (ferromcp_json_get(roots, pointer, &uri) != FERROMCP_OK) {
            break;
        }
        char *longer = format("%s%s%s", joined, i ? ", " : "", uri);
        ferromcp_string_free(uri);
        free(joined);
        joined = longer;
    }
    return joined;
}

TOOL(irr_list_roots) {
    UNUSED_TOOL_ARGS;
    char *answer = NULL;
    ferromcp_status status =
        ferromcp_context_list_roots(ferromcp_call_context(call), "client_roots", &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *uris = root_uris(answer);
    ferromcp_string_free(answer);
    respond_text(call, uris == NULL ? NULL : format("Client roots: %s", uris));
    free(uris);
}

TOOL(irr_request_state) {
    UNUSED_TOOL_ARGS;
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(ferromcp_call_context(call), "confirm",
                                                     "Confirm?", OK_SCHEMA, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    /* Reaching here means the requestState verified (core checks it). */
    char *ok = get(answer, "/content/ok", "null");
    ferromcp_string_free(answer);
    respond_text(call, format("state-ok: confirmed=%s", ok));
    free(ok);
}

TOOL(irr_multiple_inputs) {
    UNUSED_TOOL_ARGS;
    char *answers = NULL;
    ferromcp_status status = ferromcp_context_ask_all(
        ferromcp_call_context(call),
        "[{\"kind\":\"elicitation\",\"key\":\"user_name\",\"params\":{\"mode\":\"form\","
        "\"message\":\"What is your name?\",\"requestedSchema\":" NAME_SCHEMA "}},"
        "{\"kind\":\"sampling\",\"key\":\"greeting\",\"params\":{\"messages\":[{\"role\":\"user\","
        "\"content\":{\"type\":\"text\",\"text\":\"Write a short greeting.\"}}],"
        "\"maxTokens\":100}},"
        "{\"kind\":\"roots\",\"key\":\"client_roots\",\"params\":{}}]",
        &answers);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *name = get(answers, "/0/content/name", "");
    char *greeting_answer = get(answers, "/1", "{}");
    char *greeting = greeting_answer == NULL ? NULL : text_of(greeting_answer);
    int roots = 0;
    for (;; roots++) {
        char pointer[32];
        char *root = NULL;
        snprintf(pointer, sizeof pointer, "/2/roots/%d", roots);
        if (ferromcp_json_get(answers, pointer, &root) != FERROMCP_OK) {
            break;
        }
        ferromcp_string_free(root);
    }
    ferromcp_string_free(answers);
    respond_text(call, format("name=%s, greeting=%s, roots=%d", name ? name : "",
                              greeting ? greeting : "", roots));
    free(name);
    free(greeting_answer);
    free(greeting);
}

TOOL(irr_multi_round) {
    UNUSED_TOOL_ARGS;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    const char *schema = "{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\"}}}";
    char *first = NULL;
    char *second = NULL;
    ferromcp_status status =
        ferromcp_context_elicit(ctx, "step1", "Step 1: enter a value", schema, &first);
    if (status == FERROMCP_OK) {
        status =
            ferromcp_context_elicit(ctx, "step2", "Step 2: enter another value", schema, &second);
    }
    if (status != FERROMCP_OK) {
        ferromcp_string_free(first);
        fail_after(call, status);
        return;
    }
    char *a = get(first, "/content", "null");
    char *b = get(second, "/content", "null");
    ferromcp_string_free(first);
    ferromcp_string_free(second);
    respond_text(call, format("step1=%s, step2=%s", a, b));
    free(a);
    free(b);
}

TOOL(irr_tampered_state) {
    UNUSED_TOOL_ARGS;
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(ferromcp_call_context(call), "confirm",
                                                     "Confirm?", OK_SCHEMA, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    ferromcp_string_free(answer);
    ferromcp_call_respond(call, "\"state verified\"");
}

TOOL(irr_capabilities) {
    UNUSED_TOOL_ARGS;
    const ferromcp_context *ctx = ferromcp_call_context(call);
    char *capabilities = NULL;
    char *elicitation = NULL;
    bool can_elicit = false;
    if (ferromcp_context_client_capabilities_json(ctx, &capabilities) == FERROMCP_OK) {
        can_elicit = ferromcp_json_get(capabilities, "/elicitation", &elicitation) == FERROMCP_OK;
        ferromcp_string_free(elicitation);
        ferromcp_string_free(capabilities);
    }
    char *answer = NULL;
    ferromcp_status status =
        can_elicit ? ferromcp_context_elicit(ctx, "user_name", "What is your name?", NAME_SCHEMA,
                                             &answer)
                   : ferromcp_context_sample(ctx, "capital_question",
                                             "What is the capital of France?", 100, &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *text = NULL;
    if (can_elicit) {
        char *action = get(answer, "/action", "");
        char *content = get(answer, "/content", "null");
        text = format("answer: %s %s", action, content);
        free(action);
        free(content);
    } else {
        char *sampled = text_of(answer);
        text = format("answer: %s", sampled);
        free(sampled);
    }
    ferromcp_string_free(answer);
    respond_text(call, text);
}

/* ---- list changes ---- */

TOOL(dynamic_tool) {
    UNUSED_TOOL_ARGS;
    ferromcp_call_respond(call, "\"dynamic\"");
}

static void dynamic_prompt(void *userdata, const char *input_json, ferromcp_call *call) {
    (void)userdata;
    (void)input_json;
    ferromcp_call_respond(call, "\"dynamic\"");
}

TOOL(trigger_tool_change) {
    UNUSED_TOOL_ARGS;
    if (ferromcp_server_remove_tool(g_server, "test_dynamic_tool") == FERROMCP_OK) {
        ferromcp_call_respond(call, "\"removed test_dynamic_tool\"");
        return;
    }
    ferromcp_server_add_tool_json(
        g_server,
        "{\"name\":\"test_dynamic_tool\",\"description\":\"Added at run time\","
        "\"inputSchema\":" NO_ARGS "}",
        0, dynamic_tool, NULL, NULL);
    ferromcp_call_respond(call, "\"added test_dynamic_tool\"");
}

TOOL(trigger_prompt_change) {
    UNUSED_TOOL_ARGS;
    if (ferromcp_server_remove_prompt(g_server, "test_dynamic_prompt") == FERROMCP_OK) {
        ferromcp_call_respond(call, "\"removed test_dynamic_prompt\"");
        return;
    }
    ferromcp_server_add_prompt(
        g_server, "{\"name\":\"test_dynamic_prompt\",\"description\":\"Added at run time\"}",
        dynamic_prompt, NULL, NULL);
    ferromcp_call_respond(call, "\"added test_dynamic_prompt\"");
}

/* ---- resources ---- */

static void static_text(void *userdata, const char *uri, const char *variables,
                        ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    (void)variables;
    ferromcp_call_respond(call, "\"This is the content of the static text resource.\"");
}

static void static_binary(void *userdata, const char *uri, const char *variables,
                          ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    (void)variables;
    ferromcp_call_respond(call, "{\"uri\":\"test://static-binary\",\"mimeType\":\"image/png\","
                                "\"blob\":\"" PNG_BASE64 "\"}");
}

static void watched(void *userdata, const char *uri, const char *variables, ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    (void)variables;
    ferromcp_call_respond(call, "\"Watched resource content\"");
}

static void template_data(void *userdata, const char *uri, const char *variables,
                          ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    char *id = get(variables, "/id", "");
    char *quoted = id == NULL ? NULL : json_quote(id);
    respond_text(call, quoted == NULL ? NULL
                                      : format("{\"id\": %s, \"templateTest\": true, "
                                               "\"data\": \"Data for ID: %s\"}",
                                               quoted, id));
    free(quoted);
    free(id);
}

/* ---- prompts and completion ---- */

static void simple_prompt(void *userdata, const char *arguments, ferromcp_call *call) {
    (void)userdata;
    (void)arguments;
    ferromcp_call_respond(call, "\"This is a simple prompt for testing.\"");
}

static void prompt_with_arguments(void *userdata, const char *arguments, ferromcp_call *call) {
    (void)userdata;
    char *arg1 = get(arguments, "/arg1", "");
    char *arg2 = get(arguments, "/arg2", "");
    respond_text(call, format("Prompt with arguments: arg1='%s', arg2='%s'", arg1, arg2));
    free(arg1);
    free(arg2);
}

static void prompt_with_embedded_resource(void *userdata, const char *arguments,
                                          ferromcp_call *call) {
    (void)userdata;
    char *uri = get(arguments, "/resourceUri", "");
    char *quoted = uri == NULL ? NULL : json_quote(uri);
    char *messages =
        quoted == NULL
            ? NULL
            : format("[{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":{"
                     "\"uri\":%s,\"mimeType\":\"text/plain\","
                     "\"text\":\"Embedded resource content for testing.\"}}},"
                     "{\"role\":\"user\",\"content\":{\"type\":\"text\","
                     "\"text\":\"Please process the embedded resource above.\"}}]",
                     quoted);
    if (messages == NULL) {
        ferromcp_call_fail(call, "out of memory");
    } else {
        ferromcp_call_respond(call, messages);
    }
    free(messages);
    free(quoted);
    free(uri);
}

static void prompt_with_image(void *userdata, const char *arguments, ferromcp_call *call) {
    (void)userdata;
    (void)arguments;
    ferromcp_call_respond(call, "[{\"role\":\"user\",\"content\":{\"type\":\"image\",\"data\":\"" PNG_BASE64
                                "\",\"mimeType\":\"image/png\"}},"
                                "{\"role\":\"user\",\"content\":{\"type\":\"text\","
                                "\"text\":\"Please analyze the image above.\"}}]");
}

static void irr_prompt(void *userdata, const char *arguments, ferromcp_call *call) {
    (void)userdata;
    (void)arguments;
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(
        ferromcp_call_context(call), "user_context", "What context should the prompt use?",
        "{\"type\":\"object\",\"properties\":{\"context\":{\"type\":\"string\"}},"
        "\"required\":[\"context\"]}",
        &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *context = get(answer, "/content/context", "");
    ferromcp_string_free(answer);
    respond_text(call, format("Prompt with context: %s", context));
    free(context);
}

/* Answers every completion/complete: words for the prompt's arguments, ids
 * for the template's variable, nothing for anything else. */
static void complete(void *userdata, const char *params, ferromcp_call *call) {
    (void)userdata;
    static const char *words[] = {"paris", "park", "party", "pasta", "hello", "world", NULL};
    static const char *ids[] = {"123", "456", "789", NULL};
    char *type = get(params, "/ref/type", "");
    char *name = get(params, "/ref/name", "");
    char *uri = get(params, "/ref/uri", "");
    char *value = get(params, "/argument/value", "");
    const char **candidates = NULL;
    if (type && name && strcmp(type, "ref/prompt") == 0 &&
        strcmp(name, "test_prompt_with_arguments") == 0) {
        candidates = words;
    } else if (type && uri && strcmp(type, "ref/resource") == 0 &&
               strcmp(uri, "test://template/{id}/data") == 0) {
        candidates = ids;
    }
    char values[256] = "";
    int total = 0;
    size_t prefix = value ? strlen(value) : 0;
    for (int i = 0; candidates != NULL && candidates[i] != NULL; i++) {
        if (value && strncmp(candidates[i], value, prefix) == 0) {
            size_t used = strlen(values);
            snprintf(values + used, sizeof values - used, "%s\"%s\"", total ? "," : "",
                     candidates[i]);
            total++;
        }
    }
    char *result = format("{\"values\":[%s],\"total\":%d,\"hasMore\":false}", values, total);
    if (result == NULL) {
        ferromcp_call_fail(call, "out of memory");
    } else {
        ferromcp_call_respond(call, result);
    }
    free(result);
    free(type);
    free(name);
    free(uri);
    free(value);
}

/* ---- the tasks extension (SEP-2663; the suite's tasks-* scenarios) ---- */

TOOL(greet) {
    UNUSED_TOOL_ARGS;
    char *name = get(args, "/name", "world");
    respond_text(call, format("Hello, %s!", name));
    free(name);
}

/* Sleeps `seconds` seconds in small steps, stopping early once the call is
 * cancelled (tasks/cancel, or the client going away). */
TOOL(slow_compute) {
    UNUSED_TOOL_ARGS;
    char *seconds_text = get(args, "/seconds", "1");
    char *label = get(args, "/label", "job");
    double seconds = strtod(seconds_text, NULL);
    if (!(seconds >= 0)) {
        seconds = 0;
    }
    if (seconds > 3600) {
        seconds = 3600;
    }
    const ferromcp_context *context = ferromcp_call_context(call);
    for (long waited = 0; waited < (long)(seconds * 1000) && !ferromcp_context_is_cancelled(context);
         waited += 10) {
        sleep_ms(10);
    }
    respond_text(call, format("Computed %s after %s s", label, seconds_text));
    free(seconds_text);
    free(label);
}

TOOL(failing_job) {
    UNUSED_TOOL_ARGS;
    sleep_ms(1000);
    ferromcp_call_fail(call, "The job failed: the input could not be processed");
}

TOOL(protocol_error_job) {
    UNUSED_TOOL_ARGS;
    sleep_ms(100);
    ferromcp_call_fail_jsonrpc(call, -32603, "The job hit an internal error", NULL);
}

TOOL(confirm_delete) {
    UNUSED_TOOL_ARGS;
    char *filename = get(args, "/filename", "");
    char *message = format("Delete %s?", filename);
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(
        ferromcp_call_context(call), NULL, message,
        "{\"type\":\"object\",\"properties\":{\"confirm\":{\"type\":\"boolean\"}}}", &answer);
    free(message);
    if (status != FERROMCP_OK) {
        free(filename);
        fail_after(call, status);
        return;
    }
    char *action = get(answer, "/action", "");
    ferromcp_string_free(answer);
    respond_text(call, format("%s %s", strcmp(action, "accept") == 0 ? "Deleted" : "Kept", filename));
    free(action);
    free(filename);
}

/* Two questions at once: both are asked before either answer is awaited. */
TOOL(multi_input) {
    UNUSED_TOOL_ARGS;
    char *answers = NULL;
    ferromcp_status status = ferromcp_context_ask_all(
        ferromcp_call_context(call),
        "[{\"kind\":\"elicitation\",\"params\":{\"mode\":\"form\",\"message\":\"First value?\","
        "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\"}}}}},"
        "{\"kind\":\"elicitation\",\"params\":{\"mode\":\"form\",\"message\":\"Second value?\","
        "\"requestedSchema\":{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\"}}}}}]",
        &answers);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *first = get(answers, "/0/content", "{}");
    char *second = get(answers, "/1/content", "{}");
    ferromcp_string_free(answers);
    respond_text(call, format("Got %s and %s", first, second));
    free(first);
    free(second);
}

/* Asks for a name (multi round-trip), then goes on as a task. */
TOOL(tool_with_task) {
    UNUSED_TOOL_ARGS;
    char *answer = NULL;
    ferromcp_status status = ferromcp_context_elicit(
        ferromcp_call_context(call), NULL, "What is your name?",
        "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}},"
        "\"required\":[\"name\"]}",
        &answer);
    if (status != FERROMCP_OK) {
        fail_after(call, status);
        return;
    }
    char *name = get(answer, "/content/name", "stranger");
    ferromcp_string_free(answer);
    bool started = false;
    status = ferromcp_context_start_task(ferromcp_call_context(call), &started);
    if (status != FERROMCP_OK) {
        free(name);
        fail_after(call, status);
        return;
    }
    sleep_ms(200);
    respond_text(call, format("Hello, %s! (finished as a task)", name));
    free(name);
}

/* ---- registration ---- */

struct tool_def {
    const char *json;
    ferromcp_tool_callback callback;
};

#define SIMPLE(name, description) \
    "{\"name\":\"" name "\",\"description\":\"" description "\",\"inputSchema\":" NO_ARGS "}"
#define STRING_ARG(name, description, arg)                                                        \
    "{\"name\":\"" name "\",\"description\":\"" description "\",\"inputSchema\":{\"type\":"        \
    "\"object\",\"properties\":{\"" arg "\":{\"type\":\"string\"}},\"required\":[\"" arg "\"]}}"

static const struct tool_def TOOLS[] = {
    {SIMPLE("test_simple_text", "Returns a simple text response"), simple_text},
    {SIMPLE("test_image_content", "Returns an image"), image_content},
    {SIMPLE("test_audio_content", "Returns audio"), audio_content},
    {SIMPLE("test_embedded_resource", "Returns an embedded resource"), embedded_resource},
    {SIMPLE("test_multiple_content_types", "Returns text, an image and an embedded resource"),
     multiple_content_types},
    {SIMPLE("test_error_handling", "Always fails as a tool error"), error_handling},
    {SIMPLE("test_tool_with_progress", "Reports progress"), tool_with_progress},
    {SIMPLE("test_tool_with_logging", "Logs while it runs"), tool_with_logging},
    {SIMPLE("test_logging_tool", "Logs only when the request asks for a log level"),
     logging_tool},
    {"{\"name\":\"json_schema_2020_12_tool\","
     "\"description\":\"Carries a JSON Schema 2020-12 inputSchema\",\"inputSchema\":{"
     "\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"type\":\"object\","
     "\"$defs\":{\"address\":{\"$anchor\":\"addressDef\",\"type\":\"object\",\"properties\":{"
     "\"street\":{\"type\":\"string\"},\"city\":{\"type\":\"string\"}}}},"
     "\"properties\":{\"name\":{\"type\":\"string\"},\"address\":{\"$ref\":\"#/$defs/address\"},"
     "\"contactMethod\":{\"type\":\"string\",\"enum\":[\"phone\",\"email\"]},"
     "\"phone\":{\"type\":\"string\"},\"email\":{\"type\":\"string\"}},"
     "\"allOf\":[{\"anyOf\":[{\"required\":[\"phone\"]},{\"required\":[\"email\"]}]}],"
     "\"if\":{\"properties\":{\"contactMethod\":{\"const\":\"phone\"}},"
     "\"required\":[\"contactMethod\"]},"
     "\"then\":{\"required\":[\"phone\"]},\"else\":{\"required\":[\"email\"]},"
     "\"additionalProperties\":false}}",
     json_schema_tool},
    {"{\"name\":\"test_custom_header\","
     "\"description\":\"Mirrors its argument into the Mcp-Param-Value header\","
     "\"inputSchema\":{\"type\":\"object\",\"properties\":{\"value\":{\"type\":\"string\","
     "\"x-mcp-header\":\"Value\"}},\"required\":[\"value\"]}}",
     custom_header},
    {STRING_ARG("test_sampling", "Asks the client's model", "prompt"), sampling},
    {STRING_ARG("test_elicitation", "Asks the user", "message"), elicitation},
    {SIMPLE("test_elicitation_sep1034_defaults",
            "Asks the user with a schema whose fields have defaults"),
     elicitation_defaults},
    {SIMPLE("test_elicitation_sep1330_enums", "Asks the user with every enum shape"),
     elicitation_enums},
    {SIMPLE("test_reconnection",
            "Closes its SSE connection mid-call; the result arrives on the resumed stream"),
     reconnection},
    {SIMPLE("test_missing_capability", "Needs the client's sampling capability"),
     missing_capability},
    {SIMPLE("test_streaming_elicitation",
            "Streams a log line, then asks the user through an input request"),
     streaming_elicitation},
    {SIMPLE("test_input_required_result_elicitation",
            "Asks for the user's name through an input request"),
     irr_elicitation},
    {SIMPLE("test_input_required_result_sampling",
            "Asks the client's model through an input request"),
     irr_sampling},
    {SIMPLE("test_input_required_result_list_roots",
            "Asks for the client's roots through an input request"),
     irr_list_roots},
    {SIMPLE("test_input_required_result_request_state", "Carries sealed request state across rounds"),
     irr_request_state},
    {SIMPLE("test_input_required_result_multiple_inputs", "Asks for three inputs in one round"),
     irr_multiple_inputs},
    {SIMPLE("test_input_required_result_multi_round", "Asks for input over two rounds"),
     irr_multi_round},
    {SIMPLE("test_input_required_result_tampered_state", "Rejects tampered request state"),
     irr_tampered_state},
    {SIMPLE("test_input_required_result_capabilities",
            "Asks only for input the client declared it can give"),
     irr_capabilities},
    {SIMPLE("test_trigger_tool_change", "Adds or removes a tool"), trigger_tool_change},
    {SIMPLE("test_trigger_prompt_change", "Adds or removes a prompt"), trigger_prompt_change},
};

struct task_tool_def {
    const char *json;
    uint32_t flags;
    ferromcp_tool_callback callback;
};

static const struct task_tool_def TASK_TOOLS[] = {
    {STRING_ARG("greet", "Says hello (never a task)", "name"), 0, greet},
    {"{\"name\":\"slow_compute\",\"description\":\"Sleeps `seconds` seconds, then answers (a task "
     "when the client can take one)\",\"inputSchema\":{\"type\":\"object\",\"properties\":{"
     "\"seconds\":{\"type\":\"number\",\"minimum\":0},\"label\":{\"type\":\"string\"}}}}",
     FERROMCP_TOOL_TASK_OPTIONAL, slow_compute},
    {SIMPLE("failing_job", "Fails as a tool after about a second (only as a task)"),
     FERROMCP_TOOL_TASK_REQUIRED, failing_job},
    {SIMPLE("protocol_error_job", "Ends with a JSON-RPC error (a failed task)"),
     FERROMCP_TOOL_TASK_OPTIONAL, protocol_error_job},
    {STRING_ARG("confirm_delete", "Asks the user to confirm, then deletes (pretend)", "filename"),
     FERROMCP_TOOL_TASK_OPTIONAL, confirm_delete},
    {SIMPLE("multi_input", "Asks two questions at once, then answers with both"),
     FERROMCP_TOOL_TASK_OPTIONAL, multi_input},
    {SIMPLE("test_tool_with_task", "Asks for a name (multi round-trip), then finishes as a task"),
     FERROMCP_TOOL_TASK_REQUIRED | FERROMCP_TOOL_TASK_BY_CALLBACK, tool_with_task},
};

struct prompt_def {
    const char *json;
    ferromcp_json_callback callback;
};

static const struct prompt_def PROMPTS[] = {
    {"{\"name\":\"test_simple_prompt\",\"description\":\"A simple prompt without arguments\"}",
     simple_prompt},
    {"{\"name\":\"test_prompt_with_arguments\",\"description\":\"A prompt with required arguments\","
     "\"arguments\":[{\"name\":\"arg1\",\"description\":\"First test argument\",\"required\":true},"
     "{\"name\":\"arg2\",\"description\":\"Second test argument\",\"required\":true}]}",
     prompt_with_arguments},
    {"{\"name\":\"test_prompt_with_embedded_resource\","
     "\"description\":\"A prompt that embeds a resource\",\"arguments\":[{\"name\":\"resourceUri\","
     "\"description\":\"URI of the resource to embed\",\"required\":true}]}",
     prompt_with_embedded_resource},
    {"{\"name\":\"test_prompt_with_image\",\"description\":\"A prompt that includes an image\"}",
     prompt_with_image},
    {"{\"name\":\"test_input_required_result_prompt\","
     "\"description\":\"A prompt that asks for context first\"}",
     irr_prompt},
};

struct resource_def {
    const char *json;
    ferromcp_resource_callback callback;
};

static const struct resource_def RESOURCES[] = {
    {"{\"uri\":\"test://static-text\",\"name\":\"Static text resource\","
     "\"description\":\"A static text resource for testing\",\"mimeType\":\"text/plain\"}",
     static_text},
    {"{\"uri\":\"test://static-binary\",\"name\":\"Static binary resource\","
     "\"description\":\"A static binary resource (a PNG image)\",\"mimeType\":\"image/png\"}",
     static_binary},
    {"{\"uri\":\"test://watched-resource\",\"name\":\"Watched resource\","
     "\"description\":\"A resource that can be subscribed to\",\"mimeType\":\"text/plain\"}",
     watched},
};

static ferromcp_status register_all(void) {
    ferromcp_status status = FERROMCP_OK;
    for (size_t i = 0; status == FERROMCP_OK && i < sizeof TOOLS / sizeof TOOLS[0]; i++) {
        status = ferromcp_server_add_tool_json(g_server, TOOLS[i].json, 0, TOOLS[i].callback,
                                               NULL, NULL);
    }
    for (size_t i = 0; status == FERROMCP_OK && i < sizeof TASK_TOOLS / sizeof TASK_TOOLS[0]; i++) {
        status = ferromcp_server_add_tool_json(g_server, TASK_TOOLS[i].json, TASK_TOOLS[i].flags,
                                               TASK_TOOLS[i].callback, NULL, NULL);
    }
    for (size_t i = 0; status == FERROMCP_OK && i < sizeof RESOURCES / sizeof RESOURCES[0]; i++) {
        status = ferromcp_server_add_resource(g_server, RESOURCES[i].json, NULL,
                                              RESOURCES[i].callback, NULL, NULL);
    }
    if (status == FERROMCP_OK) {
        status = ferromcp_server_add_resource_template(
            g_server,
            "{\"uriTemplate\":\"test://template/{id}/data\",\"name\":\"Template resource\","
            "\"description\":\"A resource template with an id parameter\","
            "\"mimeType\":\"application/json\"}",
            NULL, template_data, NULL, NULL);
    }
    for (size_t i = 0; status == FERROMCP_OK && i < sizeof PROMPTS / sizeof PROMPTS[0]; i++) {
        status = ferromcp_server_add_prompt(g_server, PROMPTS[i].json, PROMPTS[i].callback, NULL,
                                            NULL);
    }
    if (status == FERROMCP_OK) {
        status = ferromcp_server_set_completion(g_server, complete, NULL, NULL);
    }
    return status;
}

/* ---- main ---- */

static void on_signal(int signo) {
    (void)signo;
    ferromcp_server_shutdown(g_server);
}

static int fail(const char *what, ferromcp_status status) {
    fprintf(stderr, "everything-server-c: %s: %s (%s)\n", what, ferromcp_status_message(status),
            ferromcp_last_error_message());
    return 1;
}

int main(int argc, char **argv) {
    long port = -1;
    if (argc == 2 && strcmp(argv[1], "--stdio") != 0) {
        char *end = NULL;
        port = strtol(argv[1], &end, 10);
        if (*argv[1] == '\0' || *end != '\0' || port < 0 || port > 65535) {
            fprintf(stderr, "everything-server-c: invalid port \"%s\"\n", argv[1]);
            return 2;
        }
    } else if (argc != 2) {
        fprintf(stderr, "usage: everything-server-c PORT | everything-server-c --stdio\n");
        return 2;
    }
    ferromcp_status status =
        ferromcp_server_new("ferromcp-everything-server", "0.1.0", &g_server);
    if (status != FERROMCP_OK) {
        return fail("creating the server", status);
    }
    status = register_all();
    if (status == FERROMCP_OK) {
        /* The skills extension's fixture (SEP-2640), from the repository
         * root, or FERROMCP_SKILLS_DIR. */
        const char *skills = getenv("FERROMCP_SKILLS_DIR");
        status = ferromcp_server_add_skills_dir(g_server, skills != NULL ? skills : "examples/skills",
                                                NULL);
    }
    if (status != FERROMCP_OK) {
        ferromcp_server_free(g_server);
        return fail("registering", status);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGTERM, &action, NULL);
    if (port >= 0) {
        fprintf(stderr, "everything-server-c: serving on http://127.0.0.1:%ld/mcp\n", port);
        status = ferromcp_server_serve_http(g_server, "127.0.0.1", (uint16_t)port);
    } else {
        status = ferromcp_server_serve_stdio(g_server);
    }
    int exit_code = 0;
    if (status != FERROMCP_OK && !(status == FERROMCP_CONNECTION_CLOSED && port < 0)) {
        exit_code = fail("serving", status);
    }
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    ferromcp_server_free(g_server);
    return exit_code;
}
