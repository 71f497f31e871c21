/* The conformance fixture client in C, on the ferromcp C client API (the
 * Rust twin is examples/rust/src/bin/everything-client.rs).
 *
 *   everything-client-c URL
 *
 * The official suite names the scenario in MCP_CONFORMANCE_SCENARIO, the
 * wire revision in MCP_CONFORMANCE_PROTOCOL_VERSION and scenario data in
 * MCP_CONFORMANCE_CONTEXT (JSON). Elicitation, sampling and roots requests
 * from the server are answered by one C callback, the same code for a
 * 2026-07-28 input_required round and a 2025-11-25 live request.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ferromcp.h"

/* ---- a growable string ---- */

typedef struct {
    char *text;
    size_t len, cap;
} buf;

static void buf_add(buf *b, const char *text) {
    size_t n = strlen(text);
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *grown = realloc(b->text, cap);
        if (grown == NULL) {
            fputs("out of memory\n", stderr);
            exit(3);
        }
        b->text = grown;
        b->cap = cap;
    }
    memcpy(b->text + b->len, text, n + 1);
    b->len += n;
}

/* `text` as a JSON string literal, appended to `b`. */
static void buf_quote(buf *b, const char *text) {
    buf_add(b, "\"");
    char one[8];
    for (const unsigned char *s = (const unsigned char *)text; *s; s++) {
        if (*s == '"' || *s == '\\') {
            snprintf(one, sizeof one, "\\%c", *s);
        } else if (*s < 0x20) {
            snprintf(one, sizeof one, "\\u%04x", *s);
        } else {
            snprintf(one, sizeof one, "%c", *s);
        }
        buf_add(b, one);
    }
    buf_add(b, "\"");
}

/* ---- reading JSON through ferromcp_json_get / _get_json / _keys ---- */

/* A new JSON Pointer: `base` + "/" + `key` (escaped) or index. */
static char *pointer_key(const char *base, const char *key) {
    buf b = {0};
    buf_add(&b, base);
    buf_add(&b, "/");
    for (const char *s = key; *s; s++) {
        buf_add(&b, *s == '~' ? "~0" : *s == '/' ? "~1" : (char[]){*s, 0});
    }
    return b.text;
}

static char *pointer_index(const char *base, size_t i) {
    char index[32];
    snprintf(index, sizeof index, "%zu", i);
    return pointer_key(base, index);
}

/* The string (or compact JSON) at `pointer`, or NULL; free with ferromcp_string_free. */
static char *get(const char *json, const char *pointer) {
    char *out = NULL;
    return ferromcp_json_get(json, pointer, &out) == FERROMCP_OK ? out : NULL;
}

/* The JSON text at `pointer`, or NULL; free with ferromcp_string_free. */
static char *get_json(const char *json, const char *pointer) {
    char *out = NULL;
    return ferromcp_json_get_json(json, pointer, &out) == FERROMCP_OK ? out : NULL;
}

/* A plausible value of a property's type (its first enum value if any). */
static char *placeholder(const char *prop) {
    char *first = get_json(prop, "/enum/0");
    if (first != NULL) {
        return first;
    }
    char *type = get(prop, "/type");
    const char *value = "\"test\"";
    if (type != NULL) {
        if (strcmp(type, "integer") == 0) value = "1";
        else if (strcmp(type, "number") == 0) value = "1.0";
        else if (strcmp(type, "boolean") == 0) value = "true";
        else if (strcmp(type, "array") == 0) value = "[]";
        else if (strcmp(type, "object") == 0) value = "{}";
    }
    ferromcp_string_free(type);
    char *out = NULL;
    /* Through ferromcp so every returned string is freed the same way. */
    ferromcp_json_get_json(value, "", &out);
    return out;
}

static bool listed(const char *json, const char *array_pointer, const char *name) {
    for (size_t i = 0;; i++) {
        char *p = pointer_index(array_pointer, i);
        char *item = get(json, p);
        free(p);
        if (item == NULL) {
            return false;
        }
        bool same = strcmp(item, name) == 0;
        ferromcp_string_free(item);
        if (same) {
            return true;
        }
    }
}

/* A form filled from the schema at `schema_pointer` of `json`: each
 * field's default, else a placeholder of its type; with `required_only`,
 * only the schema's required fields. A new heap string (free()). */
static char *fill_from_schema(const char *json, const char *schema_pointer, bool required_only) {
    buf out = {0};
    buf_add(&out, "{");
    char *props_pointer = pointer_key(schema_pointer, "properties");
    char *required_pointer = pointer_key(schema_pointer, "required");
    char *keys = NULL;
    if (ferromcp_json_keys(json, props_pointer, &keys) == FERROMCP_OK) {
        bool first = true;
        for (size_t i = 0;; i++) {
            char *kp = pointer_index("", i);
            char *key = get(keys, kp);
            free(kp);
            if (key == NULL) {
                break;
            }
            if (!required_only || listed(json, required_pointer, key)) {
                char *prop_pointer = pointer_key(props_pointer, key);
                char *prop = get_json(json, prop_pointer);
                char *value = prop ? get_json(prop, "/default") : NULL;
                if (value == NULL && prop != NULL) {
                    value = placeholder(prop);
                }
                if (!first) buf_add(&out, ",");
                first = false;
                buf_quote(&out, key);
                buf_add(&out, ":");
                buf_add(&out, value ? value : "null");
                ferromcp_string_free(value);
                ferromcp_string_free(prop);
                free(prop_pointer);
            }
            ferromcp_string_free(key);
        }
        ferromcp_string_free(keys);
    }
    free(props_pointer);
    free(required_pointer);
    buf_add(&out, "}");
    return out.text;
}

/* ---- answering the server's requests ---- */

static void on_input(void *userdata, ferromcp_input_kind kind, const char *params,
                     size_t params_len, ferromcp_call *call) {
    (void)userdata;
    (void)params_len;
    buf answer = {0};
    if (kind == FERROMCP_INPUT_ELICITATION) {
        char *content = fill_from_schema(params, "/requestedSchema", false);
        buf_add(&answer, "{\"action\":\"accept\",\"content\":");
        buf_add(&answer, content);
        buf_add(&answer, "}");
        free(content);
    } else if (kind == FERROMCP_INPUT_SAMPLING) {
        char *asked = get(params, "/messages/0/content/text");
        buf text = {0};
        buf_add(&text, "Answer to: ");
        buf_add(&text, asked ? asked : "");
        ferromcp_string_free(asked);
        buf_add(&answer, "{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":");
        buf_quote(&answer, text.text);
        buf_add(&answer, "},\"model\":\"ferromcp-conformance-model\",\"stopReason\":\"endTurn\"}");
        free(text.text);
    } else {
        buf_add(&answer, "{\"roots\":[{\"uri\":\"file:///test/root\",\"name\":\"Test Root\"}]}");
    }
    if (ferromcp_call_respond(call, answer.text) != FERROMCP_OK) {
        fprintf(stderr, "answer rejected: %s\n", ferromcp_last_error_message());
    }
    free(answer.text);
}

/* ---- the scenarios ---- */

static ferromcp_client *g_client = NULL;

static bool check(ferromcp_status status, const char *what) {
    if (status != FERROMCP_OK) {
        fprintf(stderr, "everything-client-c: %s failed: %s (status %d, code %d)\n", what,
                ferromcp_last_error_message(), (int)status, ferromcp_last_error_code());
        return false;
    }
    return true;
}

/* ---- OAuth for the authorization (auth/...) scenarios, as the Rust fixture ---- */

/* The client ID metadata document URL the suite's authorization server
 * accepts as a client_id (it never fetches it). */
#define CLIENT_METADATA_URL "https://conformance-test.local/client-metadata.json"

/* The suite's mock authorization server approves at once: the "user
 * interaction" requests the authorization URL and hands back its redirect,
 * as a headless client does. Runs on a ferromcp host thread. */
static void headless(void *userdata, const char *url, ferromcp_oauth_reply *reply) {
    (void)userdata;
    char *redirect = NULL;
    if (ferromcp_oauth_headless_authorize(url, &redirect) == FERROMCP_OK) {
        ferromcp_oauth_reply_set(reply, redirect);
    } else {
        ferromcp_oauth_reply_fail(reply, ferromcp_last_error_message());
    }
    ferromcp_string_free(redirect);
}

/* The workload's platform token: the scenario's valid_jwt (the userdata). */
static void assertion(void *userdata, const char *issuer, const char *resource,
                      ferromcp_oauth_reply *reply) {
    (void)issuer;
    (void)resource;
    ferromcp_oauth_reply_set(reply, (const char *)userdata);
}

static void free_string(void *userdata) { ferromcp_string_free(userdata); }

/* `"name":<the context's string at pointer>` when the context has it,
 * after a comma unless it is the object's first member (`*first`). */
static void copy_member(buf *b, bool *first, const char *context, const char *name,
                        const char *pointer) {
    char *value = context ? get(context, pointer) : NULL;
    if (value == NULL) return;
    if (!*first) buf_add(b, ",");
    *first = false;
    buf_quote(b, name);
    buf_add(b, ":");
    buf_quote(b, value);
    ferromcp_string_free(value);
}

static bool starts_with(const char *text, const char *prefix) {
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

/* The OAuth settings of an authorization scenario, attached to `options`. */
static bool set_oauth(ferromcp_client_options *options, const char *scenario,
                      const char *context) {
    buf json = {0};
    bool first = false; /* each object below starts with a member */
    char *jwt = NULL;
    if (strcmp(scenario, "auth/client-credentials-basic") == 0) {
        buf_add(&json, "{\"grant\":\"clientCredentials\"");
        copy_member(&json, &first, context, "clientId", "/client_id");
        copy_member(&json, &first, context, "clientSecret", "/client_secret");
    } else if (strcmp(scenario, "auth/client-credentials-jwt") == 0) {
        buf_add(&json, "{\"grant\":\"clientCredentials\"");
        copy_member(&json, &first, context, "clientId", "/client_id");
        copy_member(&json, &first, context, "privateKeyPem", "/private_key_pem");
    } else if (strcmp(scenario, "auth/wif-jwt-bearer") == 0) {
        buf_add(&json, "{\"grant\":\"jwtBearer\"");
        copy_member(&json, &first, context, "clientId", "/client_id");
        jwt = context ? get(context, "/valid_jwt") : NULL;
        if (jwt == NULL) {
            fputs("everything-client-c: no valid_jwt in the context\n", stderr);
            free(json.text);
            return false;
        }
    } else if (strcmp(scenario, "auth/enterprise-managed-authorization") == 0) {
        buf_add(&json, "{\"grant\":\"enterpriseManaged\"");
        copy_member(&json, &first, context, "clientId", "/client_id");
        copy_member(&json, &first, context, "clientSecret", "/client_secret");
        buf_add(&json, ",\"idp\":{");
        first = true;
        copy_member(&json, &first, context, "tokenEndpoint", "/idp_token_endpoint");
        copy_member(&json, &first, context, "clientId", "/idp_client_id");
        copy_member(&json, &first, context, "idToken", "/idp_id_token");
        buf_add(&json, "}");
    } else {
        buf_add(&json, "{\"redirectUri\":\"http://localhost:3000/callback\""
                       ",\"clientName\":\"ferromcp-everything-client-c\""
                       ",\"clientMetadataUrl\":\"" CLIENT_METADATA_URL "\"");
        /* The DPoP extension scenarios: ask for key-bound tokens. */
        buf_add(&json, starts_with(scenario, "auth/dpop") ? ",\"dpop\":true" : ",\"dpop\":false");
        char *client_id = context ? get(context, "/client_id") : NULL;
        if (client_id != NULL) {
            buf_add(&json, ",\"preRegistered\":[{");
            first = true;
            copy_member(&json, &first, context, "issuer", "/issuer");
            copy_member(&json, &first, context, "clientId", "/client_id");
            copy_member(&json, &first, context, "clientSecret", "/client_secret");
            buf_add(&json, "}]");
            ferromcp_string_free(client_id);
        }
    }
    buf_add(&json, "}");
    ferromcp_oauth_options *oauth = NULL;
    bool ok = check(ferromcp_oauth_options_new(json.text, &oauth), "oauth options");
    free(json.text);
    if (ok && jwt != NULL) {
        ok = check(ferromcp_oauth_options_on_assertion(oauth, assertion, jwt, free_string),
                   "assertion callback");
        if (ok) jwt = NULL; /* the options own it now */
    } else if (ok && !starts_with(scenario, "auth/client-credentials") &&
               strcmp(scenario, "auth/enterprise-managed-authorization") != 0) {
        ok = check(ferromcp_oauth_options_on_authorize(oauth, headless, NULL, NULL),
                   "authorize callback");
    }
    ok = ok && check(ferromcp_client_options_set_oauth(options, oauth), "set oauth");
    ferromcp_oauth_options_free(oauth);
    ferromcp_string_free(jwt);
    return ok;
}

/* Every item of a list, following nextCursor: `*out` gets a heap array
 * of JSON texts (free each with ferromcp_string_free, then the array). */
static bool list_all(ferromcp_list_kind kind, const char *field, char ***out, size_t *count) {
    char *cursor = NULL;
    char **items = NULL;
    size_t n = 0;
    char *field_pointer = pointer_key("", field);
    bool ok = true;
    do {
        char *page = NULL;
        ok = check(ferromcp_client_list(g_client, kind, cursor, &page), "list");
        ferromcp_string_free(cursor);
        cursor = NULL;
        if (!ok) break;
        for (size_t i = 0;; i++) {
            char *p = pointer_index(field_pointer, i);
            char *item = get_json(page, p);
            free(p);
            if (item == NULL) break;
            char **grown = realloc(items, (n + 1) * sizeof *items);
            if (grown == NULL) exit(3);
            items = grown;
            items[n++] = item;
        }
        cursor = get(page, "/nextCursor");
        ferromcp_string_free(page);
    } while (cursor != NULL);
    free(field_pointer);
    *out = items;
    *count = n;
    return ok;
}

static void free_items(char **items, size_t n) {
    for (size_t i = 0; i < n; i++) ferromcp_string_free(items[i]);
    free(items);
}

static bool list_tools_only(void) {
    char **tools;
    size_t n;
    bool ok = list_all(FERROMCP_LIST_TOOLS, "tools", &tools, &n);
    free_items(tools, n);
    return ok;
}

static bool call(const char *name, const char *arguments) {
    char *result = NULL;
    bool ok = check(ferromcp_client_call_tool(g_client, name, arguments, 0, NULL, NULL, NULL,
                                              &result),
                    name);
    if (ok) {
        char *is_error = get(result, "/isError");
        fprintf(stderr, "called %s: isError=%s\n", name, is_error ? is_error : "none");
        ferromcp_string_free(is_error);
    }
    ferromcp_string_free(result);
    return ok;
}

/* Calls a listed tool with every required argument filled from its schema. */
static bool call_listed(const char *tool) {
    char *name = get(tool, "/name");
    char *arguments = fill_from_schema(tool, "/inputSchema", true);
    bool ok = name != NULL && call(name, arguments);
    free(arguments);
    ferromcp_string_free(name);
    return ok;
}

static bool call_each_listed_tool(void) {
    char **tools;
    size_t n;
    bool ok = list_all(FERROMCP_LIST_TOOLS, "tools", &tools, &n);
    for (size_t i = 0; ok && i < n; i++) ok = call_listed(tools[i]);
    free_items(tools, n);
    return ok;
}

static bool standard_headers(void) {
    char **items;
    size_t n;
    bool ok = list_all(FERROMCP_LIST_TOOLS, "tools", &items, &n);
    if (ok && n > 0) ok = call_listed(items[0]);
    free_items(items, n);
    if (!ok) return false;
    ok = list_all(FERROMCP_LIST_RESOURCES, "resources", &items, &n);
    if (ok && n > 0) {
        char *uri = get(items[0], "/uri");
        char *contents = NULL;
        ok = uri != NULL &&
             check(ferromcp_client_read_resource(g_client, uri, &contents), "read resource");
        ferromcp_string_free(contents);
        ferromcp_string_free(uri);
    }
    free_items(items, n);
    if (!ok) return false;
    ok = list_all(FERROMCP_LIST_PROMPTS, "prompts", &items, &n);
    if (ok && n > 0) {
        char *name = get(items[0], "/name");
        buf args = {0};
        buf_add(&args, "{");
        for (size_t i = 0;; i++) {
            char *p = pointer_index("/arguments", i);
            char *pp = pointer_key(p, "name");
            char *arg = get(items[0], pp);
            free(p);
            free(pp);
            if (arg == NULL) break;
            if (i > 0) buf_add(&args, ",");
            buf_quote(&args, arg);
            buf_add(&args, ":\"test\"");
            ferromcp_string_free(arg);
        }
        buf_add(&args, "}");
        char *prompt = NULL;
        ok = name != NULL &&
             check(ferromcp_client_get_prompt(g_client, name, args.text, &prompt), "get prompt");
        ferromcp_string_free(prompt);
        ferromcp_string_free(name);
        free(args.text);
    }
    free_items(items, n);
    return ok;
}

static bool custom_headers(const char *context) {
    if (!list_tools_only()) return false;
    for (size_t i = 0; context != NULL; i++) {
        char *p = pointer_index("/toolCalls", i);
        char *np = pointer_key(p, "name");
        char *ap = pointer_key(p, "arguments");
        char *name = get(context, np);
        char *arguments = get_json(context, ap);
        free(p);
        free(np);
        free(ap);
        bool ok = name == NULL || call(name, arguments ? arguments : "{}");
        bool more = name != NULL;
        ferromcp_string_free(name);
        ferromcp_string_free(arguments);
        if (!ok) return false;
        if (!more) break;
    }
    return true;
}

static bool schema_preservation(void) {
    char **tools;
    size_t n;
    bool ok = list_all(FERROMCP_LIST_TOOLS, "tools", &tools, &n);
    bool found = false;
    for (size_t i = 0; ok && !found && i < n; i++) {
        char *name = get(tools[i], "/name");
        if (name != NULL && strcmp(name, "json_schema_2020_12_tool") == 0) {
            found = true;
            char *schema = get_json(tools[i], "/inputSchema");
            buf args = {0};
            buf_add(&args, "{\"schema\":");
            buf_add(&args, schema ? schema : "{}");
            buf_add(&args, "}");
            ok = call("json_schema_echo", args.text);
            free(args.text);
            ferromcp_string_free(schema);
        }
        ferromcp_string_free(name);
    }
    free_items(tools, n);
    if (ok && !found) fputs("json_schema_2020_12_tool not listed\n", stderr);
    return ok && found;
}

/* The skills extension (SEP-2640): loads every listed skill (core checks
 * SKILL.md against the entry: digest, size, frontmatter) and reads its
 * other listed files, each checked; a mismatch fails the run. */
static bool load_every_skill(void) {
    char **skills;
    size_t n;
    bool ok = list_all(FERROMCP_LIST_SKILLS, "skills", &skills, &n);
    for (size_t i = 0; ok && i < n; i++) {
        ferromcp_skill *skill = NULL;
        ok = check(ferromcp_client_load_skill(g_client, skills[i], &skill), "load skill");
        char *uri = get(skills[i], "/uri");
        for (size_t f = 0; ok; f++) {
            char *p = pointer_index("/resources", f);
            char *up = pointer_key(p, "uri");
            char *file = get(skills[i], up);
            free(p);
            free(up);
            if (file == NULL) break;
            if (uri == NULL || strcmp(file, uri) != 0) {
                uint8_t *data = NULL;
                size_t len = 0;
                ok = check(ferromcp_skill_read(skill, file, &data, &len), "read skill file");
                ferromcp_bytes_free(data, len);
            }
            ferromcp_string_free(file);
        }
        ferromcp_string_free(uri);
        ferromcp_skill_free(skill);
    }
    free_items(skills, n);
    return ok;
}

static bool run(const char *scenario, const char *context) {
    /* Every authorization scenario ends the same way once logged in: list
     * the tools and call the first (`test-tool`). */
    if (starts_with(scenario, "auth/")) {
        char **tools;
        size_t n;
        bool ok = list_all(FERROMCP_LIST_TOOLS, "tools", &tools, &n);
        if (ok && n == 0) {
            fputs("everything-client-c: the server lists no tools\n", stderr);
            ok = false;
        }
        ok = ok && call_listed(tools[0]);
        free_items(tools, n);
        return ok;
    }
    if (strcmp(scenario, "initialize") == 0 ||
        strcmp(scenario, "json-schema-ref-no-deref") == 0) {
        return list_tools_only();
    }
    if (strcmp(scenario, "elicitation-sep1034-client-defaults") == 0) {
        return list_tools_only() && call("test_client_elicitation_defaults", "{}");
    }
    if (strcmp(scenario, "sse-retry") == 0) {
        return list_tools_only() && call("test_reconnection", "{}");
    }
    if (strcmp(scenario, "tools_call") == 0) {
        return list_tools_only() && call("add_numbers", "{\"a\":5,\"b\":3}");
    }
    if (strcmp(scenario, "request-metadata") == 0) {
        char *found = NULL;
        bool ok = check(ferromcp_client_discover(g_client, &found), "discover");
        ferromcp_string_free(found);
        return ok && call_each_listed_tool();
    }
    if (strcmp(scenario, "sep-2322-client-request-state") == 0) {
        return list_tools_only() && call("test_mrtr_echo_state", "{}") &&
               call("test_mrtr_no_state", "{}") && call("test_mrtr_unrelated", "{}") &&
               call("test_mrtr_no_result_type", "{}");
    }
    if (strcmp(scenario, "http-standard-headers") == 0) return standard_headers();
    if (strcmp(scenario, "http-custom-headers") == 0) return custom_headers(context);
    if (strcmp(scenario, "http-invalid-tool-headers") == 0) return call_each_listed_tool();
    if (strcmp(scenario, "json-schema-2020-12-preservation") == 0) return schema_preservation();
    if (strcmp(scenario, "sep-2640-client-no-prefetch") == 0) {
        char **skills;
        size_t n;
        bool ok = list_all(FERROMCP_LIST_SKILLS, "skills", &skills, &n);
        free_items(skills, n);
        return ok;
    }
    if (strcmp(scenario, "sep-2640-client-verify-digest") == 0 ||
        strcmp(scenario, "sep-2640-client-verify-size") == 0 ||
        strcmp(scenario, "sep-2640-client-verify-frontmatter") == 0) {
        return load_every_skill();
    }
    fprintf(stderr, "unknown scenario \"%s\"\n", scenario);
    return false;
}

static bool is_legacy(const char *version) {
    static const char *const legacy[] = {"2025-11-25", "2025-06-18", "2025-03-26",
                                         "2024-11-05", NULL};
    for (size_t i = 0; legacy[i] != NULL; i++) {
        if (strcmp(version, legacy[i]) == 0) return true;
    }
    return false;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs("usage: everything-client-c URL (scenario in MCP_CONFORMANCE_SCENARIO)\n", stderr);
        return 2;
    }
    const char *url = argv[argc - 1];
    const char *scenario = getenv("MCP_CONFORMANCE_SCENARIO");
    const char *version = getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
    const char *context = getenv("MCP_CONFORMANCE_CONTEXT");
    if (scenario == NULL) scenario = "";

    /* The suite names the wire: 2025-11-25 and earlier are the legacy
     * (initialize) era, anything newer is stateless. */
    buf options_json = {0};
    buf_add(&options_json, "{\"name\":\"ferromcp-everything-client-c\",\"version\":\"0.1.0\"");
    if (version != NULL && is_legacy(version)) {
        buf_add(&options_json, ",\"era\":\"legacy\"");
    } else if (version != NULL) {
        buf_add(&options_json, ",\"era\":\"modern\",\"protocolVersion\":");
        buf_quote(&options_json, version);
    }
    buf_add(&options_json, "}");

    ferromcp_client_options *options = NULL;
    bool ok = check(ferromcp_client_options_new(options_json.text, &options), "options");
    free(options_json.text);
    static const ferromcp_input_kind kinds[] = {FERROMCP_INPUT_ELICITATION,
                                                FERROMCP_INPUT_SAMPLING, FERROMCP_INPUT_ROOTS};
    for (size_t i = 0; ok && i < 3; i++) {
        ok = check(ferromcp_client_options_on_input(options, kinds[i], on_input, NULL, NULL),
                   "input handler");
    }
    if (ok && starts_with(scenario, "auth/")) ok = set_oauth(options, scenario, context);
    ok = ok && check(ferromcp_client_connect_http(url, NULL, options, &g_client), "connect");
    ferromcp_client_options_free(options);
    ok = ok && run(scenario, context);
    ferromcp_client_free(g_client);
    if (!ok) {
        fprintf(stderr, "everything-client-c: scenario \"%s\" failed\n", scenario);
        return 1;
    }
    return 0;
}
