/* Per-caller visibility from C (ferromcp_server_set_visibility(),
 * ferromcp_server_clear_visibility()), driven by two in-memory clients
 * with different clientInfo names: lists are filtered per client for
 * every kind (tools, prompts, resources, templates); a hidden tool call,
 * prompt get or resource read fails exactly as an unknown one does; a rule
 * replaced, cleared or left to the server's end runs its finalizer once;
 * every item of one request is asked with the same meta document, without
 * core's lock held (the rule may call back into the server, even clear
 * itself). Run from the repository root, under valgrind. */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"

static atomic_int rule_finalized[3];
static atomic_int tools_finalized = 0;
/* The kinds the rule was asked about (indexed by kind). */
static atomic_int kinds_seen[4];
static atomic_int bad_meta = 0;

static void count_finalizer(void *userdata) { atomic_fetch_add((atomic_int *)userdata, 1); }

/* Only "admin" sees the admin tool and whatever is named secret. */
static bool admin_only(void *userdata, const char *meta_json, int kind, const char *key) {
    if (userdata != (void *)&rule_finalized[0] && userdata != (void *)&rule_finalized[2]) {
        atomic_fetch_add(&bad_meta, 1);
    }
    if (kind >= 0 && kind < 4) atomic_fetch_add(&kinds_seen[kind], 1);
    if (strstr(meta_json, "\"protocolVersion\":\"") == NULL) atomic_fetch_add(&bad_meta, 1);
    char *client = NULL;
    bool admin = ferromcp_json_get(meta_json, "/clientInfo/name", &client) == FERROMCP_OK &&
                 strcmp(client, "admin") == 0;
    ferromcp_string_free(client);
    if (admin) return true;
    switch (kind) {
        case FERROMCP_VISIBLE_TOOL:
            return strcmp(key, "admin_tool") != 0;
        case FERROMCP_VISIBLE_PROMPT:
        case FERROMCP_VISIBLE_RESOURCE:
        case FERROMCP_VISIBLE_RESOURCE_TEMPLATE:
            return strstr(key, "secret") == NULL;
        default:
            return false;
    }
}

/* Hides every tool from everyone. */
static bool no_tools(void *userdata, const char *meta_json, int kind, const char *key) {
    (void)userdata;
    (void)meta_json;
    (void)key;
    return kind != FERROMCP_VISIBLE_TOOL;
}

static void echo(void *userdata, const char *arguments_json, size_t arguments_len,
                 ferromcp_call *call) {
    (void)userdata;
    (void)arguments_json;
    (void)arguments_len;
    CHECK_STATUS(ferromcp_call_respond(call, "\"done\""), FERROMCP_OK);
}

static void read_text(void *userdata, const char *uri, const char *variables_json,
                      ferromcp_call *call) {
    (void)userdata;
    (void)uri;
    (void)variables_json;
    CHECK_STATUS(ferromcp_call_respond(call, "\"text\""), FERROMCP_OK);
}

static void render(void *userdata, const char *input_json, ferromcp_call *call) {
    (void)userdata;
    (void)input_json;
    CHECK_STATUS(ferromcp_call_respond(call, "\"hello\""), FERROMCP_OK);
}

static ferromcp_client *connect_as(ferromcp_server *server, const char *name) {
    char options_json[128];
    snprintf(options_json, sizeof options_json, "{\"name\":\"%s\",\"version\":\"1.0.0\"}", name);
    ferromcp_client_options *options = NULL;
    CHECK_STATUS(ferromcp_client_options_new(options_json, &options), FERROMCP_OK);
    ferromcp_client *client = NULL;
    CHECK_STATUS(ferromcp_client_connect_in_memory(server, options, &client), FERROMCP_OK);
    ferromcp_client_options_free(options);
    return client;
}

static char *list(ferromcp_client *client, ferromcp_list_kind kind) {
    char *page = NULL;
    CHECK_STATUS(ferromcp_client_list(client, kind, NULL, &page), FERROMCP_OK);
    return page;
}

/* The JSON-RPC code and message a failing call leaves behind. */
struct failure {
    int code;
    char message[256];
};

static struct failure failed(ferromcp_status status) {
    struct failure f = {0, ""};
    CHECK_STATUS(status, FERROMCP_PEER_ERROR);
    f.code = ferromcp_last_error_code();
    snprintf(f.message, sizeof f.message, "%s", ferromcp_last_error_message());
    return f;
}

/* A hidden item fails as an unknown one: same code, same message but for
 * the name. */
static void check_same_failure(struct failure hidden, const char *hidden_key,
                               struct failure unknown, const char *unknown_key) {
    CHECK(hidden.code != 0 && hidden.code == unknown.code);
    char expected[512];
    const char *at = strstr(unknown.message, unknown_key);
    CHECK(at != NULL);
    if (at == NULL) return;
    snprintf(expected, sizeof expected, "%.*s%s%s", (int)(at - unknown.message), unknown.message,
             hidden_key, at + strlen(unknown_key));
    if (strcmp(expected, hidden.message) != 0) {
        fprintf(stderr, "hidden: %s\nunknown: %s\n", hidden.message, unknown.message);
    }
    CHECK(strcmp(expected, hidden.message) == 0);
}

static ferromcp_server *make_server(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("visible", "1.0.0", &server), FERROMCP_OK);
    const char *schema = "{\"type\":\"object\"}";
    CHECK_STATUS(ferromcp_server_add_tool(server, "echo", NULL, schema, NULL, echo,
                                          &tools_finalized, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_tool(server, "admin_tool", NULL, schema, NULL, echo,
                                          &tools_finalized, count_finalizer),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_prompt(server, "{\"name\":\"greet\"}", render, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_prompt(server, "{\"name\":\"secret_prompt\"}", render, NULL,
                                            NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_resource(server, "{\"uri\":\"x://public\",\"name\":\"public\"}",
                                              NULL, read_text, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_resource(server, "{\"uri\":\"x://secret\",\"name\":\"secret\"}",
                                              NULL, read_text, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_resource_template(
                     server, "{\"uriTemplate\":\"x://item/{id}\",\"name\":\"item\"}", NULL,
                     read_text, NULL, NULL),
                 FERROMCP_OK);
    CHECK_STATUS(ferromcp_server_add_resource_template(
                     server, "{\"uriTemplate\":\"x://secret/{id}\",\"name\":\"secret-item\"}", NULL,
                     read_text, NULL, NULL),
                 FERROMCP_OK);
    return server;
}

static void test_lists_and_calls(ferromcp_server *server) {
    ferromcp_client *guest = connect_as(server, "guest");
    ferromcp_client *admin = connect_as(server, "admin");

    /* Lists, per client. */
    char *page = list(guest, FERROMCP_LIST_TOOLS);
    CHECK_CONTAINS(page, "\"echo\"");
    CHECK(page != NULL && strstr(page, "admin_tool") == NULL);
    CHECK_CONTAINS(page, "\"cacheScope\":\"private\"");
    ferromcp_string_free(page);
    page = list(admin, FERROMCP_LIST_TOOLS);
    CHECK_CONTAINS(page, "\"echo\"");
    CHECK_CONTAINS(page, "\"admin_tool\"");
    ferromcp_string_free(page);

    page = list(guest, FERROMCP_LIST_PROMPTS);
    CHECK_CONTAINS(page, "\"greet\"");
    CHECK(page != NULL && strstr(page, "secret_prompt") == NULL);
    ferromcp_string_free(page);
    page = list(admin, FERROMCP_LIST_PROMPTS);
    CHECK_CONTAINS(page, "\"secret_prompt\"");
    ferromcp_string_free(page);

    page = list(guest, FERROMCP_LIST_RESOURCES);
    CHECK_CONTAINS(page, "x://public");
    CHECK(page != NULL && strstr(page, "x://secret") == NULL);
    ferromcp_string_free(page);
    page = list(admin, FERROMCP_LIST_RESOURCES);
    CHECK_CONTAINS(page, "x://secret");
    ferromcp_string_free(page);

    page = list(guest, FERROMCP_LIST_RESOURCE_TEMPLATES);
    CHECK_CONTAINS(page, "x://item/{id}");
    CHECK(page != NULL && strstr(page, "x://secret/{id}") == NULL);
    ferromcp_string_free(page);
    page = list(admin, FERROMCP_LIST_RESOURCE_TEMPLATES);
    CHECK_CONTAINS(page, "x://secret/{id}");
    ferromcp_string_free(page);

    /* A hidden tool's call fails as an unknown tool's does. */
    char *result = NULL;
    struct failure hidden = failed(ferromcp_client_call_tool(guest, "admin_tool", "{}", 20000,
                                                             NULL, NULL, NULL, &result));
    struct failure unknown = failed(ferromcp_client_call_tool(guest, "no_such_tool", "{}", 20000,
                                                              NULL, NULL, NULL, &result));
    check_same_failure(hidden, "admin_tool", unknown, "no_such_tool");
    CHECK(result == NULL);
    CHECK_STATUS(
        ferromcp_client_call_tool(admin, "admin_tool", "{}", 20000, NULL, NULL, NULL, &result),
        FERROMCP_OK);
    CHECK_CONTAINS(result, "done");
    ferromcp_string_free(result);
    result = NULL;

    /* So do a hidden prompt's get and a hidden resource's read. */
    hidden = failed(ferromcp_client_get_prompt(guest, "secret_prompt", NULL, &result));
    unknown = failed(ferromcp_client_get_prompt(guest, "no_such_prompt", NULL, &result));
    check_same_failure(hidden, "secret_prompt", unknown, "no_such_prompt");
    hidden = failed(ferromcp_client_read_resource(guest, "x://secret", &result));
    unknown = failed(ferromcp_client_read_resource(guest, "x://nothing", &result));
    check_same_failure(hidden, "x://secret", unknown, "x://nothing");
    /* (A URI of a hidden template, too.) */
    hidden = failed(ferromcp_client_read_resource(guest, "x://secret/7", &result));
    check_same_failure(hidden, "x://secret/7", unknown, "x://nothing");
    CHECK(result == NULL);
    CHECK_STATUS(ferromcp_client_read_resource(guest, "x://item/7", &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "text");
    ferromcp_string_free(result);
    result = NULL;
    CHECK_STATUS(ferromcp_client_read_resource(admin, "x://secret/7", &result), FERROMCP_OK);
    ferromcp_string_free(result);
    result = NULL;
    CHECK_STATUS(ferromcp_client_get_prompt(admin, "secret_prompt", NULL, &result), FERROMCP_OK);
    CHECK_CONTAINS(result, "hello");
    ferromcp_string_free(result);

    ferromcp_client_free(admin);
    ferromcp_client_free(guest);
}

/* ---- one meta document per request ---- */

enum { SAME_META_TOOLS = 6 };

/* What record_meta saw since the last reset: how often it was asked, the
 * meta text's address and a copy of it from the first item, how many later
 * items got other meta, and whether calling back into the server worked. */
static struct {
    ferromcp_server *server;
    atomic_int calls;
    atomic_int differing;
    atomic_int reentered;
    const char *pointer;
    char text[2048];
} seen;

static void reset_seen(void) {
    atomic_store(&seen.calls, 0);
    seen.pointer = NULL;
    seen.text[0] = '\0';
}

static bool record_meta(void *userdata, const char *meta_json, int kind, const char *key) {
    (void)userdata;
    (void)key;
    if (kind != FERROMCP_VISIBLE_TOOL) return true;
    if (atomic_fetch_add(&seen.calls, 1) == 0) {
        seen.pointer = meta_json;
        snprintf(seen.text, sizeof seen.text, "%s", meta_json);
        /* No lock is held while the rule runs: this takes the registry's
         * write lock, and would deadlock if the list still held it. */
        if (ferromcp_server_remove_tool(seen.server, "no_such_tool") == FERROMCP_NOT_FOUND) {
            atomic_fetch_add(&seen.reentered, 1);
        }
    } else if (meta_json != seen.pointer || strcmp(meta_json, seen.text) != 0) {
        atomic_fetch_add(&seen.differing, 1);
    }
    return true;
}

/* Clears itself on its first item: its userdata stays valid for the rest
 * of the request, and is finalized once the request is judged. */
static atomic_int self_cleared_finalized = 0;
static atomic_int self_cleared_early = 0;

static bool clears_itself(void *userdata, const char *meta_json, int kind, const char *key) {
    (void)meta_json;
    if (userdata != (void *)&self_cleared_finalized ||
        atomic_load(&self_cleared_finalized) != 0) {
        atomic_fetch_add(&self_cleared_early, 1);
    }
    if (atomic_fetch_add(&seen.calls, 1) == 0) {
        CHECK_STATUS(ferromcp_server_clear_visibility(seen.server), FERROMCP_OK);
    }
    return kind != FERROMCP_VISIBLE_TOOL || strcmp(key, "t0") != 0;
}

/* Every item of one request is asked with the same meta text, at the same
 * address; a list asks once per item of its kind, a call once. */
static void test_one_meta_per_request(void) {
    ferromcp_server *server = NULL;
    CHECK_STATUS(ferromcp_server_new("same-meta", "1.0.0", &server), FERROMCP_OK);
    for (int i = 0; i < SAME_META_TOOLS; i++) {
        char name[16];
        snprintf(name, sizeof name, "t%d", i);
        CHECK_STATUS(ferromcp_server_add_tool(server, name, NULL, "{\"type\":\"object\"}", NULL,
                                              echo, NULL, NULL),
                     FERROMCP_OK);
    }
    seen.server = server;
    CHECK_STATUS(ferromcp_server_set_visibility(server, record_meta, NULL, NULL), FERROMCP_OK);
    ferromcp_client *client = connect_as(server, "guest");
    for (int round = 0; round < 2; round++) {
        reset_seen();
        char *page = list(client, FERROMCP_LIST_TOOLS);
        CHECK_CONTAINS(page, "\"t5\"");
        ferromcp_string_free(page);
        CHECK(atomic_load(&seen.calls) == SAME_META_TOOLS);
        /* Core's description of the caller, headers included (none in memory). */
        CHECK_CONTAINS(seen.text, "\"clientInfo\":{\"name\":\"guest\"");
        CHECK_CONTAINS(seen.text, "\"headers\":{}");
    }
    reset_seen();
    char *result = NULL;
    CHECK_STATUS(ferromcp_client_call_tool(client, "t3", "{}", 20000, NULL, NULL, NULL, &result),
                 FERROMCP_OK);
    ferromcp_string_free(result);
    CHECK(atomic_load(&seen.calls) == 1);
    CHECK(atomic_load(&seen.differing) == 0);
    CHECK(atomic_load(&seen.reentered) == 3);

    /* A rule clearing itself: this list is still judged by it, whole. */
    CHECK_STATUS(ferromcp_server_set_visibility(server, clears_itself, &self_cleared_finalized,
                                                count_finalizer),
                 FERROMCP_OK);
    reset_seen();
    char *page = list(client, FERROMCP_LIST_TOOLS);
    CHECK(page != NULL && strstr(page, "\"t0\"") == NULL);
    CHECK_CONTAINS(page, "\"t5\"");
    ferromcp_string_free(page);
    CHECK(atomic_load(&seen.calls) == SAME_META_TOOLS);
    CHECK(atomic_load(&self_cleared_early) == 0);
    CHECK(atomic_load(&self_cleared_finalized) == 1);
    page = list(client, FERROMCP_LIST_TOOLS);
    CHECK_CONTAINS(page, "\"t0\"");
    ferromcp_string_free(page);
    CHECK(atomic_load(&seen.calls) == SAME_META_TOOLS);

    ferromcp_client_free(client);
    ferromcp_server_free(server);
}

int main(void) {
    test_one_meta_per_request();

    ferromcp_server *server = make_server();
    int kept = 0;
    CHECK_STATUS(ferromcp_server_set_visibility(NULL, admin_only, NULL, NULL),
                 FERROMCP_NULL_ARGUMENT);
    /* A NULL rule: the userdata stays the caller's. */
    CHECK_STATUS(ferromcp_server_set_visibility(server, NULL, &kept, count_finalizer),
                 FERROMCP_NULL_ARGUMENT);
    CHECK_STATUS(ferromcp_server_clear_visibility(NULL), FERROMCP_NULL_ARGUMENT);
    /* Clearing without a rule does nothing. */
    CHECK_STATUS(ferromcp_server_clear_visibility(server), FERROMCP_OK);

    CHECK_STATUS(
        ferromcp_server_set_visibility(server, admin_only, &rule_finalized[0], count_finalizer),
        FERROMCP_OK);
    test_lists_and_calls(server);
    for (int kind = 0; kind < 4; kind++) CHECK(atomic_load(&kinds_seen[kind]) > 0);
    CHECK(atomic_load(&bad_meta) == 0);

    /* Replaced: the first rule's finalizer runs, once. */
    CHECK(atomic_load(&rule_finalized[0]) == 0);
    CHECK_STATUS(
        ferromcp_server_set_visibility(server, no_tools, &rule_finalized[1], count_finalizer),
        FERROMCP_OK);
    CHECK(atomic_load(&rule_finalized[0]) == 1);
    ferromcp_client *admin = connect_as(server, "admin");
    char *page = list(admin, FERROMCP_LIST_TOOLS);
    CHECK(page != NULL && strstr(page, "echo") == NULL);
    ferromcp_string_free(page);
    ferromcp_client_free(admin);

    /* Cleared: everyone sees everything, and the second rule is finalized. */
    CHECK_STATUS(ferromcp_server_clear_visibility(server), FERROMCP_OK);
    CHECK(atomic_load(&rule_finalized[1]) == 1);
    ferromcp_client *guest = connect_as(server, "guest");
    page = list(guest, FERROMCP_LIST_TOOLS);
    CHECK_CONTAINS(page, "\"admin_tool\"");
    CHECK(page != NULL && strstr(page, "\"cacheScope\":\"private\"") == NULL);
    ferromcp_string_free(page);
    char *result = NULL;
    CHECK_STATUS(
        ferromcp_client_call_tool(guest, "admin_tool", "{}", 20000, NULL, NULL, NULL, &result),
        FERROMCP_OK);
    ferromcp_string_free(result);
    ferromcp_client_free(guest);

    /* Left in place: finalized with the server. */
    CHECK_STATUS(
        ferromcp_server_set_visibility(server, admin_only, &rule_finalized[2], count_finalizer),
        FERROMCP_OK);
    ferromcp_server_free(server);
    for (int i = 0; i < 250 && (atomic_load(&rule_finalized[2]) < 1 ||
                                atomic_load(&tools_finalized) < 2);
         i++) {
        sleep_ms(20);
    }
    sleep_ms(50);
    CHECK(atomic_load(&rule_finalized[0]) == 1);
    CHECK(atomic_load(&rule_finalized[1]) == 1);
    CHECK(atomic_load(&rule_finalized[2]) == 1);
    CHECK(atomic_load(&tools_finalized) == 2);
    CHECK(kept == 0);
    return check_report("test_visibility");
}
