/*
 * Entropy for TLS keys on a board without a hardware RNG (glue/agent_tls.c):
 * the seed file that carries entropy from one boot to the next
 * (PKG_AGENT_TLS_SEED_FILE), and what differs between boards (the MAC
 * addresses of lwIP's interfaces, a chip ID the board offers through
 * agent_board_unique_id()).
 *
 * No mbedTLS here: agent_tls.c hands in how to mix bytes into the entropy
 * and how to draw from the DRBG seeded with it (mbedTLS's entropy
 * accumulator and CTR-DRBG), so the host tests run this file as it is
 * (tests/c/test_tls_seed.c). The seed is written with the state file's
 * functions (agent_options.c): whole to "<file>.tmp", renamed over the
 * file, elm FAT's remove-first included. It is never logged.
 */
#include <rtthread.h>
#include <rtconfig.h>

/* With the package's HTTPS (the host: its tls part); nothing otherwise. */
#if defined(PKG_AGENT_TLS_MBEDTLS) || defined(AGENT_ALL_PARTS)

#include <string.h>
#include "agent_glue.h"

#if !defined(rt_weak) && defined(RT_WEAK)
#define rt_weak RT_WEAK /* RT-Thread before 5.0 */
#endif

/* The board defines its own to mix its chip ID in (AgentExt.h). */
rt_weak rt_size_t agent_board_unique_id(rt_uint8_t *buf, rt_size_t len)
{
    (void)buf;
    (void)len;
    return 0;
}

/*
 * The seed file's path ("" for none). Only where the board has DFS's POSIX
 * API, as the other kept files. The host's TLS is rustls, which the OS
 * seeds: it has none.
 */
#if defined(__linux__) && (defined(AGENT_ALL_PARTS) || defined(AGENT_HOST_PARTS))
const char *agent_glue_tls_seed_file(void)
{
    return "";
}
#else
#ifndef PKG_AGENT_TLS_SEED_FILE
#define PKG_AGENT_TLS_SEED_FILE ""
#endif
const char *agent_glue_tls_seed_file(void)
{
#if defined(DFS_USING_POSIX)
    return PKG_AGENT_TLS_SEED_FILE;
#else
    return "";
#endif
}
#endif

#if defined(RT_USING_LWIP)
#include <lwip/netif.h>
#endif

int agent_glue_board_ids(unsigned char *buf, int size)
{
    int used = 0;
    if (buf == RT_NULL || size <= 0)
        return 0;
#if defined(RT_USING_LWIP)
    {
        struct netif *n;
        /* Interfaces are added and removed by other threads: the scheduler
         * is held while the few bytes are copied. */
        rt_enter_critical();
#ifdef NETIF_FOREACH
        NETIF_FOREACH(n)
#else
        for (n = netif_list; n != RT_NULL; n = n->next)
#endif
        {
            /* (No break: with LWIP_SINGLE_NETIF this is an if.) */
            int len = n->hwaddr_len;
            if (len > NETIF_MAX_HWADDR_LEN)
                len = NETIF_MAX_HWADDR_LEN;
            if (len <= size - used)
            {
                memcpy(buf + used, n->hwaddr, (size_t)len);
                used += len;
            }
        }
        rt_exit_critical();
    }
#endif
    if (used < size)
    {
        rt_size_t id = agent_board_unique_id((rt_uint8_t *)buf + used, (rt_size_t)(size - used));
        used += id < (rt_size_t)(size - used) ? (int)id : size - used;
    }
    return used;
}

/* Forget secret bytes in a way the compiler keeps. */
static void agent_tls_seed_wipe(void *p, rt_size_t len)
{
    volatile unsigned char *v = (volatile unsigned char *)p;
    while (len--)
        *v++ = 0;
}

/* Each step in a frame of its own: the buffers of one are not on the stack
 * while another draws (mbedTLS's seeding is the deepest call here) or
 * writes the file, on the request's thread. */
#if defined(__GNUC__) || defined(__clang__) || defined(__CC_ARM)
#define AGENT_SEED_STEP __attribute__((noinline)) static
#else
#define AGENT_SEED_STEP static
#endif

/* Read the seed file and mix what it holds in; its state, *n its bytes. */
AGENT_SEED_STEP int agent_tls_seed_read(const char *path, const struct agent_tls_seed_io *io, int *n)
{
    /* Room for more than a seed: a longer file is mixed in as far as this. */
    unsigned char seed[2 * AGENT_TLS_SEED_LEN];
    int status;
    *n = agent_glue_state_read(path, (char *)seed, (int)sizeof(seed));
    if (*n == -1)
        status = AGENT_TLS_SEED_MISSING;
    else if (*n < 0)
        status = AGENT_TLS_SEED_UNREADABLE;
    else if (*n < AGENT_TLS_SEED_LEN)
        status = AGENT_TLS_SEED_SHORT;
    else
        status = AGENT_TLS_SEED_READ;
    /* What there is goes in, even a short seed: it cannot hurt. */
    if (*n > 0 && io->mix(io->ctx, seed, (rt_size_t)*n) != 0)
        status = AGENT_TLS_SEED_FAILED;
    agent_tls_seed_wipe(seed, sizeof(seed));
    return status;
}

/* Mix the board's IDs in: 0, or -1 when mixing failed. */
AGENT_SEED_STEP int agent_tls_seed_ids(const struct agent_tls_seed_io *io)
{
    unsigned char ids[64];
    int len = agent_glue_board_ids(ids, (int)sizeof(ids));
    return len > 0 && io->mix(io->ctx, ids, (rt_size_t)len) != 0 ? -1 : 0;
}

/* Draw the next boot's seed and write it: 0, AGENT_TLS_SEED_NOT_WRITTEN,
 * or AGENT_TLS_SEED_FAILED when the draw failed (nothing written). */
AGENT_SEED_STEP int agent_tls_seed_write(const char *path, const struct agent_tls_seed_io *io)
{
    unsigned char seed[AGENT_TLS_SEED_LEN];
    int status = 0;
    if (io->draw(io->ctx, seed, AGENT_TLS_SEED_LEN) != 0)
        status = AGENT_TLS_SEED_FAILED;
    else if (agent_glue_state_write(path, (const char *)seed, AGENT_TLS_SEED_LEN) != 0)
        status = AGENT_TLS_SEED_NOT_WRITTEN;
    agent_tls_seed_wipe(seed, sizeof(seed));
    return status;
}

/* One line, the path and counts only. */
AGENT_SEED_STEP void agent_tls_seed_log(int status, const char *path, int n)
{
    char line[200];
    line[0] = '\0';
    switch (status == AGENT_TLS_SEED_FAILED ? status : status & ~AGENT_TLS_SEED_NOT_WRITTEN)
    {
    case AGENT_TLS_SEED_READ:
        rt_snprintf(line, sizeof(line), "TLS: entropy seed read from %s", path);
        break;
    case AGENT_TLS_SEED_MISSING:
        rt_snprintf(line, sizeof(line), "TLS: no entropy seed in %s yet: this boot's keys are weak", path);
        break;
    case AGENT_TLS_SEED_SHORT:
        rt_snprintf(line, sizeof(line), "TLS: the entropy seed %s is short (%d of %d bytes): this boot's keys are weak",
                    path, n, AGENT_TLS_SEED_LEN);
        break;
    case AGENT_TLS_SEED_UNREADABLE:
        rt_snprintf(line, sizeof(line), "TLS: the entropy seed %s cannot be read: this boot's keys are weak", path);
        break;
    case AGENT_TLS_SEED_OFF:
        return;
    default:
        agent_glue_log(4, "TLS: the entropy pool could not be made: each connection's keys come from its own "
                          "entropy");
        return;
    }
    {
        rt_size_t used = strlen(line);
        rt_snprintf(line + used, sizeof(line) - used, (status & AGENT_TLS_SEED_NOT_WRITTEN)
                                                          ? "; the next one cannot be written: the next boot may "
                                                            "repeat these keys"
                                                          : "; the next one is written");
    }
    agent_glue_log(status == AGENT_TLS_SEED_READ ? 6 : 4, line);
}

int agent_tls_seed_boot(const char *path, const struct agent_tls_seed_io *io, unsigned char *pool,
                        rt_size_t pool_len)
{
    int status = AGENT_TLS_SEED_OFF, n = 0;
    int have_path = path != RT_NULL && path[0] != '\0';

    if (io == RT_NULL || io->mix == RT_NULL || io->draw == RT_NULL || pool == RT_NULL)
        return AGENT_TLS_SEED_FAILED;
    if (have_path)
        status = agent_tls_seed_read(path, io, &n);
    if (status != AGENT_TLS_SEED_FAILED && agent_tls_seed_ids(io) != 0)
        status = AGENT_TLS_SEED_FAILED;
    /* The next boot's seed comes from the DRBG seeded with all of it (and
     * the entropy sources it gathers then), written before any key of
     * this boot is drawn: the next boot differs even when its tick and
     * clock do not. The pool is drawn after it, so the file cannot tell
     * this boot's keys. */
    if (have_path && status != AGENT_TLS_SEED_FAILED)
    {
        int written = agent_tls_seed_write(path, io);
        status = written == AGENT_TLS_SEED_FAILED ? written : status | written;
    }
    if (status != AGENT_TLS_SEED_FAILED && io->draw(io->ctx, pool, pool_len) != 0)
        status = AGENT_TLS_SEED_FAILED;
    if (status == AGENT_TLS_SEED_FAILED)
        agent_tls_seed_wipe(pool, pool_len);
    agent_tls_seed_log(status, path, n);
    return status;
}

#endif /* PKG_AGENT_TLS_MBEDTLS || AGENT_ALL_PARTS */
