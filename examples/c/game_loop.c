/* A game's frame loop at 60 Hz, driving capstan without ever blocking:
 *
 *   - "spawn_enemy" is a CAPSTAN_TOOL_MAIN_THREAD tool: it touches the game
 *     world, so it runs only inside capstan_registry_pump, called once a frame.
 *   - "pathfind" is slow (150 ms) and runs on capstan's pool meanwhile.
 *   - Results are delivered with CAPSTAN_EXEC_DELIVER_POLL and collected by
 *     capstan_batch_poll on the frame thread.
 *
 * Prints per-frame timings; the slowest frame stays far under the 150 ms a
 * slow tool takes, because nothing waits for it. Exits non-zero if a frame
 * blocked (took over 50 ms) or a result was lost. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "capstan.h"

static int enemies = 0; /* game state: only the frame thread touches it */

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void spawn_enemy(void *user_data, capstan_call *call) {
    (void)user_data;
    enemies++;
    char out[64];
    snprintf(out, sizeof out, "{\"spawned\": true, \"enemies\": %d}", enemies);
    capstan_call_return(call, CAPSTAN_CONTENT_JSON, out, CAPSTAN_NTS);
}

static void pathfind(void *user_data, capstan_call *call) {
    (void)user_data;
    struct timespec pause = {0, 150 * 1000 * 1000};
    nanosleep(&pause, NULL);
    capstan_call_return(call, CAPSTAN_CONTENT_TEXT, "path: A -> B -> C", CAPSTAN_NTS);
}

struct frame_state {
    int frame;
    int results;
    int done;
};

static void on_result(void *user_data, const capstan_result *r) {
    struct frame_state *s = user_data;
    if (r == NULL) {
        s->done = 1;
        return;
    }
    s->results++;
    printf("  frame %3d: result #%zu %.*s (%llu us): %.*s\n", s->frame, r->index, (int)r->name_len,
           r->name, (unsigned long long)r->duration_us, (int)r->content_len, r->content);
}

int main(void) {
    capstan_registry *reg;
    capstan_registry_new(NULL, &reg);
    capstan_tool_def spawn = {.struct_size = sizeof spawn,
                              .name = "spawn_enemy",
                              .description = "Spawn an enemy in the world.",
                              .parameters = "{\"type\":\"object\"}",
                              .callback = spawn_enemy,
                              .flags = CAPSTAN_TOOL_MAIN_THREAD};
    capstan_tool_def path = {.struct_size = sizeof path,
                             .name = "pathfind",
                             .description = "Find a path (slow).",
                             .parameters = "{\"type\":\"object\"}",
                             .callback = pathfind};
    capstan_registry_add_tool(reg, &spawn);
    capstan_registry_add_tool(reg, &path);

    const char *calls = "[{\"id\":\"1\",\"name\":\"pathfind\"},{\"id\":\"2\",\"name\":\"spawn_enemy\"},"
                        "{\"id\":\"3\",\"name\":\"pathfind\"},{\"id\":\"4\",\"name\":\"spawn_enemy\"}]";
    capstan_exec_options opts = {.struct_size = sizeof opts, .flags = CAPSTAN_EXEC_DELIVER_POLL};
    capstan_batch *batch;
    if (capstan_batch_submit(reg, calls, CAPSTAN_NTS, &opts, NULL, NULL, &batch) != CAPSTAN_OK) return 1;

    struct frame_state s = {0, 0, 0};
    double worst = 0, total = 0;
    const double frame_ms = 1000.0 / 60.0;
    for (s.frame = 0; s.frame < 30; s.frame++) {
        double start = now_ms();
        size_t ran = capstan_registry_pump(reg, 2);           /* main-thread tools, 2 ms budget */
        capstan_batch_poll(batch, on_result, &s, 16);           /* results, on this thread */
        double work = now_ms() - start;
        if (work > worst) worst = work;
        total += work;
        if (ran) printf("  frame %3d: pumped %zu main-thread call(s), enemies=%d\n", s.frame, ran, enemies);
        printf("frame %3d: %.3f ms of capstan work%s\n", s.frame, work, s.done ? " (batch done)" : "");
        double left = frame_ms - (now_ms() - start);
        if (left > 0) {
            struct timespec pause = {0, (long)(left * 1e6)};
            nanosleep(&pause, NULL);
        }
    }
    printf("30 frames: mean %.3f ms, worst %.3f ms of capstan work per frame; %d results, enemies=%d\n",
           total / 30, worst, s.results, enemies);
    capstan_batch_free(batch);
    capstan_registry_free(reg);
    return (worst < 50.0 && s.results == 4 && s.done && enemies == 2) ? 0 : 1;
}
