/* The flavour of the library a program runs on (make dist: full or core).
 * `flavour_check core`: the MCP bridge is absent (capstan_features_mask has
 * no MCP bit, capstan_mcp_server_start answers CAPSTAN_ERR_UNSUPPORTED with a
 * message naming the feature); `flavour_check full`: it is there. */
#include <capstan.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "core") != 0 && strcmp(argv[1], "full") != 0)) {
        fprintf(stderr, "usage: flavour_check core|full\n");
        return 2;
    }
    int core = strcmp(argv[1], "core") == 0;
    uint32_t mcp = CAPSTAN_FEATURE_MCP_SERVER | CAPSTAN_FEATURE_MCP_MOUNT;
    uint32_t mask = capstan_features_mask();
    if (core != ((mask & mcp) == 0)) {
        fprintf(stderr, "features mask %#x: the MCP bits say %s, expected %s\n", mask,
                (mask & mcp) ? "full" : "core", argv[1]);
        return 1;
    }
    if (core) {
        capstan_registry *reg = NULL;
        capstan_mcp_server *server = NULL;
        if (capstan_registry_new(NULL, &reg) != CAPSTAN_OK) {
            fprintf(stderr, "capstan_registry_new failed\n");
            return 1;
        }
        capstan_status st = capstan_mcp_server_start(reg, NULL, &server);
        char message[256];
        capstan_error_message(message, sizeof message);
        capstan_registry_free(reg);
        if (st != CAPSTAN_ERR_UNSUPPORTED || server != NULL || strstr(message, "mcp") == NULL) {
            fprintf(stderr, "capstan_mcp_server_start on the core: status %d, message '%s'\n", (int)st, message);
            return 1;
        }
    }
    printf("%s flavour (features mask %#x)\n", argv[1], mask);
    return 0;
}
