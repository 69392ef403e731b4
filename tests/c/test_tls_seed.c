/*
 * The TLS seed file (glue/agent_tls_seed.c, as the board's glue runs it):
 * read and mixed in, the next one drawn from the seeded DRBG and written
 * whole; a missing, short or unreadable file, an unwritable path (its
 * folder a regular file, which refuses root too), no path,
 * a failing DRBG; the board's chip ID mixed in; one log line each, never
 * the seed; the heap back to its baseline. The DRBG here is a stand-in
 * (agent_tls.c hands in mbedTLS's): it records what was mixed and when it
 * was first drawn, and draws numbered blocks.
 *
 *   test_tls_seed DIR   DIR: an empty, writable directory
 */
#include <rtthread.h>
#include <rt_host.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "agent_glue.h"
#include "check.h"

/* The board's chip ID: this program's, over the glue's weak one. */
static const char chip_id[] = "CHIP-ID-0123";
rt_size_t agent_board_unique_id(rt_uint8_t *buf, rt_size_t len)
{
    rt_size_t n = sizeof(chip_id) - 1 < len ? sizeof(chip_id) - 1 : len;
    memcpy(buf, chip_id, n);
    return n;
}

/* The stand-in for mbedTLS's entropy and CTR-DRBG. */
struct fake
{
    unsigned char mixed[256];
    size_t mixed_len;
    size_t mixed_at_first_draw; /* (size_t)-1: never drawn */
    int draws;
    int fail_draw; /* the draw that fails (1-based), 0: none */
};

static int fake_mix(void *ctx, const unsigned char *data, rt_size_t len)
{
    struct fake *f = ctx;
    if (f->mixed_len + len > sizeof(f->mixed))
        return -1;
    memcpy(f->mixed + f->mixed_len, data, len);
    f->mixed_len += len;
    return 0;
}

/* Draw k (1-based) fills with 0xD0 + k. */
static int fake_draw(void *ctx, unsigned char *out, rt_size_t len)
{
    struct fake *f = ctx;
    if (f->draws == 0)
        f->mixed_at_first_draw = f->mixed_len;
    f->draws++;
    if (f->draws == f->fail_draw)
        return -1;
    memset(out, 0xD0 + f->draws, len);
    return 0;
}

static void fake_init(struct fake *f, struct agent_tls_seed_io *io)
{
    memset(f, 0, sizeof(*f));
    f->mixed_at_first_draw = (size_t)-1;
    io->ctx = f;
    io->mix = fake_mix;
    io->draw = fake_draw;
}

static int contains(const unsigned char *hay, size_t hay_len, const void *needle, size_t len)
{
    for (size_t i = 0; len <= hay_len && i + len <= hay_len; i++)
        if (memcmp(hay + i, needle, len) == 0)
            return 1;
    return 0;
}

static int all_bytes(const unsigned char *p, size_t len, unsigned char v)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != v)
            return 0;
    return 1;
}

/* The file's bytes into buf: their count, -1 when there is none. */
static long file_bytes(const char *path, unsigned char *buf, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    long n = read(fd, buf, size);
    close(fd);
    return n;
}

static void write_file(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    if (fd >= 0)
    {
        CHECK(write(fd, data, len) == (ssize_t)len);
        close(fd);
    }
}

/* What the log printed since the last call (the console is captured). */
static char logged[8192];
static const char *take_log(void)
{
    rt_host_console_take(logged, sizeof(logged));
    return logged;
}

static int lines_with(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

/* A seed of printable bytes, so that a log line holding it would show. */
static const char old_seed[] = "SEED-of-the-last-boot-0123456789"; /* 32 bytes */

static char dir[512], path[600], tmp[700];
static unsigned char pool[32];

/* A file of a whole seed: mixed in first, then the IDs; the next seed is
 * the first draw (after both were mixed), the pool the second. */
static void read_mix_rewrite(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    unsigned char now[64];
    fake_init(&f, &io);
    write_file(path, old_seed, 32);
    take_log();
    int st = agent_tls_seed_boot(path, &io, pool, sizeof(pool));
    const char *log = take_log();
    printf("@@ read: status %d, log: %s", st, log);
    CHECK(st == AGENT_TLS_SEED_READ);
    CHECK(f.mixed_len == 32 + strlen(chip_id));
    CHECK(memcmp(f.mixed, old_seed, 32) == 0);
    CHECK(memcmp(f.mixed + 32, chip_id, strlen(chip_id)) == 0);
    CHECK(f.mixed_at_first_draw == f.mixed_len); /* seeded with everything */
    CHECK(f.draws == 2);
    CHECK(file_bytes(path, now, sizeof(now)) == 32);
    CHECK(all_bytes(now, 32, 0xD1));
    CHECK(all_bytes(pool, sizeof(pool), 0xD2));
    CHECK(access(tmp, F_OK) != 0 && errno == ENOENT); /* renamed, no .tmp left */
    CHECK(lines_with(log, "TLS:") == 1);
    CHECK(strstr(log, "W/") == NULL);
    CHECK(strstr(log, "TLS: entropy seed read from ") && strstr(log, path) && strstr(log, "the next one is written"));
    /* Neither seed is in the log. */
    unsigned char next[8];
    memset(next, 0xD1, sizeof(next));
    CHECK(!contains((const unsigned char *)log, strlen(log), old_seed, 8));
    CHECK(!contains((const unsigned char *)log, strlen(log), next, sizeof(next)));
}

/* No file yet (a first boot): the IDs alone, a warning, a file written. */
static void missing(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    unsigned char now[64];
    fake_init(&f, &io);
    unlink(path);
    take_log();
    int st = agent_tls_seed_boot(path, &io, pool, sizeof(pool));
    const char *log = take_log();
    printf("@@ missing: status %d, log: %s", st, log);
    CHECK(st == AGENT_TLS_SEED_MISSING);
    CHECK(f.mixed_len == strlen(chip_id) && memcmp(f.mixed, chip_id, f.mixed_len) == 0);
    CHECK(file_bytes(path, now, sizeof(now)) == 32 && all_bytes(now, 32, 0xD1));
    CHECK(all_bytes(pool, sizeof(pool), 0xD2));
    CHECK(lines_with(log, "TLS:") == 1);
    CHECK(strstr(log, "W/") && strstr(log, "no entropy seed in ") && strstr(log, "this boot's keys are weak")
          && strstr(log, "the next one is written"));
}

/* A reset between removing the old file and renaming the new one left
 * only "<file>.tmp" (elm FAT's way): that one is read. */
static void left_in_tmp(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    unsigned char now[64];
    fake_init(&f, &io);
    unlink(path);
    write_file(tmp, old_seed, 32);
    take_log();
    int st = agent_tls_seed_boot(path, &io, pool, sizeof(pool));
    take_log();
    CHECK(st == AGENT_TLS_SEED_READ);
    CHECK(f.mixed_len >= 32 && memcmp(f.mixed, old_seed, 32) == 0);
    CHECK(file_bytes(path, now, sizeof(now)) == 32 && all_bytes(now, 32, 0xD1));
    CHECK(access(tmp, F_OK) != 0);
}

/* Shorter than a seed: mixed in all the same, a warning, a whole one written. */
static void short_file(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    unsigned char now[64];
    fake_init(&f, &io);
    write_file(path, old_seed, 5);
    take_log();
    int st = agent_tls_seed_boot(path, &io, pool, sizeof(pool));
    const char *log = take_log();
    printf("@@ short: status %d, log: %s", st, log);
    CHECK(st == AGENT_TLS_SEED_SHORT);
    CHECK(f.mixed_len == 5 + strlen(chip_id) && memcmp(f.mixed, old_seed, 5) == 0);
    CHECK(file_bytes(path, now, sizeof(now)) == 32 && all_bytes(now, 32, 0xD1));
    CHECK(lines_with(log, "TLS:") == 1);
    CHECK(strstr(log, "W/") && strstr(log, "is short (5 of 32 bytes)"));
    CHECK(strstr(log, "SEED") == NULL);
}

/* The path cannot be written (its folder is a regular file: refused to
 * root too): nothing read, nothing written, the keys still get the IDs and
 * the pool, and the log says the next boot may repeat these keys. */
static void unwritable(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    char blocked[700], file_as_dir[650];
    fake_init(&f, &io);
    snprintf(file_as_dir, sizeof(file_as_dir), "%s/not-a-folder", dir);
    write_file(file_as_dir, "x", 1);
    snprintf(blocked, sizeof(blocked), "%s/seed", file_as_dir);
    take_log();
    int st = agent_tls_seed_boot(blocked, &io, pool, sizeof(pool));
    const char *log = take_log();
    printf("@@ unwritable: status %d, log: %s", st, log);
    CHECK(st == (AGENT_TLS_SEED_MISSING | AGENT_TLS_SEED_NOT_WRITTEN));
    CHECK(f.draws == 2 && all_bytes(pool, sizeof(pool), 0xD2));
    CHECK(lines_with(log, "TLS:") == 1);
    CHECK(strstr(log, "W/") && strstr(log, "the next one cannot be written: the next boot may repeat these keys"));
    unsigned char one[4];
    CHECK(file_bytes(file_as_dir, one, sizeof(one)) == 1); /* untouched */
    unlink(file_as_dir);
}

/* The path is a folder: read() fails, so it is unreadable (not taken for
 * an empty file), and the keys still get the IDs. */
static void unreadable(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    char folder[650], folder_tmp[700];
    fake_init(&f, &io);
    snprintf(folder, sizeof(folder), "%s/folder", dir);
    CHECK(mkdir(folder, 0700) == 0);
    take_log();
    int st = agent_tls_seed_boot(folder, &io, pool, sizeof(pool));
    const char *log = take_log();
    printf("@@ unreadable: status %d, log: %s", st, log);
    CHECK((st & ~AGENT_TLS_SEED_NOT_WRITTEN) == AGENT_TLS_SEED_UNREADABLE);
    CHECK(f.mixed_len == strlen(chip_id));
    CHECK(all_bytes(pool, sizeof(pool), 0xD2));
    CHECK(lines_with(log, "TLS:") == 1 && strstr(log, "cannot be read"));
    snprintf(folder_tmp, sizeof(folder_tmp), "%s.tmp", folder);
    unlink(folder_tmp);
    rmdir(folder);
}

/* No seed file (a hardware RNG, or no file system): the IDs, the pool, no
 * file, no log line. */
static void no_path(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    fake_init(&f, &io);
    take_log();
    CHECK(agent_tls_seed_boot("", &io, pool, sizeof(pool)) == AGENT_TLS_SEED_OFF);
    CHECK(f.draws == 1 && all_bytes(pool, sizeof(pool), 0xD1));
    CHECK(f.mixed_len == strlen(chip_id));
    fake_init(&f, &io);
    CHECK(agent_tls_seed_boot(RT_NULL, &io, pool, sizeof(pool)) == AGENT_TLS_SEED_OFF);
    CHECK(strstr(take_log(), "TLS:") == NULL);
}

/* The DRBG fails: nothing written (the old file stays), the pool zeroed. */
static void drbg_fails(void)
{
    struct fake f;
    struct agent_tls_seed_io io;
    unsigned char now[64];
    for (int which = 1; which <= 2; which++)
    {
        fake_init(&f, &io);
        f.fail_draw = which;
        write_file(path, old_seed, 32);
        memset(pool, 0x55, sizeof(pool));
        take_log();
        int st = agent_tls_seed_boot(path, &io, pool, sizeof(pool));
        const char *log = take_log();
        printf("@@ draw %d fails: status %d, log: %s", which, st, log);
        CHECK(st == AGENT_TLS_SEED_FAILED);
        CHECK(all_bytes(pool, sizeof(pool), 0));
        /* The first draw is the next seed: it failed, the old one stays; the
         * second is the pool: the seed was written before it. */
        CHECK(file_bytes(path, now, sizeof(now)) == 32);
        CHECK(which == 1 ? memcmp(now, old_seed, 32) == 0 : all_bytes(now, 32, 0xD1));
        CHECK(lines_with(log, "TLS:") == 1 && strstr(log, "the entropy pool could not be made"));
    }
    struct agent_tls_seed_io none = {0};
    CHECK(agent_tls_seed_boot(path, &none, pool, sizeof(pool)) == AGENT_TLS_SEED_FAILED);
}

int main(int argc, char **argv)
{
    if (argc != 2)
    {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    snprintf(dir, sizeof(dir), "%s", argv[1]);
    snprintf(path, sizeof(path), "%s/.agent_seed", dir);
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    /* The board's IDs: no lwIP on the host, so this program's chip ID alone. */
    unsigned char ids[64];
    CHECK(agent_glue_board_ids(ids, sizeof(ids)) == (int)strlen(chip_id));
    CHECK(agent_glue_board_ids(ids, 4) == 4 && memcmp(ids, chip_id, 4) == 0);
    CHECK(agent_glue_board_ids(ids, 0) == 0);
    /* The host's TLS (rustls) has no seed file. */
    CHECK(strcmp(agent_glue_tls_seed_file(), "") == 0);

    rt_host_console_capture(RT_TRUE);
    rt_size_t baseline = heap_used();
    missing();
    read_mix_rewrite();
    left_in_tmp();
    short_file();
    unwritable();
    unreadable();
    no_path();
    drbg_fails();
    CHECK(heap_used() == baseline);
    rt_host_console_capture(RT_FALSE);
    unlink(path);
    return CHECK_DONE();
}
