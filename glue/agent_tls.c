/*
 * HTTPS through the board's webclient ("MbedTLS support" mode) and mbedTLS
 * package, with what a request to a cloud model needs and the package's
 * tls_client.c does not give:
 *
 * - a connect and a handshake bounded by the request's deadline and
 *   cancelled by cleanup: the TCP connect runs non-blocking and the
 *   handshake reads through select() in short polls, asking the library
 *   between two polls how long the request on this thread may still wait
 *   (agent_tls_budget, src/net/tls_watch.rs);
 * - keys from the board's RNG (PKG_AGENT_TLS_RNG_FUNC, or RT-Thread's
 *   hwcrypto RNG), never from an unseeded rand() alone; without an RNG,
 *   from a seed file renewed at every boot, the board's MAC addresses and
 *   chip ID, the tick and the clock (agent_tls_seed.c);
 * - certificate dates checked against the board's clock once it is set
 *   (the package's tls_config.h leaves MBEDTLS_HAVE_TIME_DATE off);
 * - the reason of a failure (CA, name, date, timeout, record size) told to
 *   the library, which words the error and does not retry what cannot
 *   recover;
 * - one full handshake per server while the agent runs: the session is
 *   kept and resumed by the next connection, until agent_tls_forget().
 *
 * The SConscript links the library with --wrap for the five
 * mbedtls_client_* functions webclient calls (GCC-family linkers), so
 * webclient reaches the functions below; the package's own stay in the
 * image unused. Nothing here calls them.
 */
#include <rtthread.h>
#include <rtconfig.h>
#include "agent_glue.h"

#if defined(PKG_AGENT_TLS_MBEDTLS) && defined(WEBCLIENT_USING_MBED_TLS) && defined(PKG_USING_MBEDTLS)

#include <string.h>
#include <time.h>
#include <errno.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/ioctl.h>
#include <netdb.h>

#include <tls_client.h>
#include <tls_certificate.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <mbedtls/platform_util.h>

#ifdef RT_HWCRYPTO_USING_RNG
#include <hwcrypto.h>
#include <hw_rng.h>
#endif

/* Records a server may send: TLS allows 16384 bytes of plaintext each. */
#define AGENT_TLS_RECORD_MAX 16384
#if MBEDTLS_SSL_IN_CONTENT_LEN < AGENT_TLS_RECORD_MAX
#warning "rtt-agent: mbedTLS's input buffer is below 16384 bytes, so a large answer over HTTPS fails (set MBEDTLS_SSL_MAX_CONTENT_LEN to 16384 in the mbedtls package's menu; PKG_AGENT_TLS_OUT_CONTENT_LEN keeps the outgoing buffer small)"
#endif

/* A poll of the connect and of a handshake read: how soon a cleanup or the
 * deadline is seen. */
#define AGENT_TLS_POLL_MS 200
/* Longest silence of a handshake on a thread without a request of ours (a
 * C tool's own webclient call): webclient's default socket timeout. */
#define AGENT_TLS_UNWATCHED_MS 6000

/* A clock that says a time before this was never set (RT-Thread's soft RTC
 * starts in 2018): certificate dates are not checked then. The SConscript
 * passes the build's date. */
#ifndef AGENT_TLS_CLOCK_EPOCH
#define AGENT_TLS_CLOCK_EPOCH 1735689600L /* 2025-01-01 */
#endif

/* ---- the board's RNG -------------------------------------------------- */

#ifdef AGENT_TLS_RNG_FUNC
int AGENT_TLS_RNG_FUNC(unsigned char *buf, size_t len);
#endif

/* 1: keys come from a hardware RNG. */
static int agent_tls_hw_rng(void)
{
#if defined(AGENT_TLS_RNG_FUNC)
    return 1;
#elif defined(RT_HWCRYPTO_USING_RNG)
    return rt_hwcrypto_dev_default() != RT_NULL;
#else
    return 0;
#endif
}

/* What varies between boots on a board without an RNG: the tick and the
 * clock when the first request is made, and a count of sessions. Not
 * secret: the start log says the keys are predictable. */
static void agent_tls_weak(unsigned char *out, size_t len)
{
    static rt_uint32_t count;
    rt_uint32_t mix[4];
    size_t i;
    mix[0] = rt_tick_get();
    mix[1] = (rt_uint32_t)time(RT_NULL);
    mix[2] = ++count;
    mix[3] = (rt_uint32_t)(rt_ubase_t)&mix;
    for (i = 0; i < len; i++)
    {
        rt_uint32_t w = mix[i % 4] ^ (rt_uint32_t)(i * 2654435761u);
        out[i] = (unsigned char)(w >> ((i / 4 % 4) * 8));
    }
}

static int agent_tls_entropy(void *data, unsigned char *out, size_t len, size_t *olen)
{
    (void)data;
#if defined(AGENT_TLS_RNG_FUNC)
    if (AGENT_TLS_RNG_FUNC(out, len) != 0)
        return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
#elif defined(RT_HWCRYPTO_USING_RNG)
    if (agent_tls_hw_rng())
    {
        size_t i;
        for (i = 0; i < len; i += 4)
        {
            rt_uint32_t r = rt_hwcrypto_rng_update();
            size_t n = len - i < 4 ? len - i : 4;
            memcpy(out + i, &r, n);
        }
    }
    else
        agent_tls_weak(out, len);
#else
    agent_tls_weak(out, len);
#endif
    *olen = len;
    return 0;
}

/* The board's sources on an entropy context. Strong when it is a hardware
 * RNG, or when mbedTLS has no strong source of its own (it would refuse to
 * seed). */
static void agent_tls_add_sources(mbedtls_entropy_context *entropy)
{
#if defined(MBEDTLS_ENTROPY_HARDWARE_ALT) || !defined(MBEDTLS_NO_PLATFORM_ENTROPY)
    mbedtls_entropy_add_source(entropy, agent_tls_entropy, RT_NULL, 32,
                               agent_tls_hw_rng() ? MBEDTLS_ENTROPY_SOURCE_STRONG : MBEDTLS_ENTROPY_SOURCE_WEAK);
#else
    mbedtls_entropy_add_source(entropy, agent_tls_entropy, RT_NULL, 32, MBEDTLS_ENTROPY_SOURCE_STRONG);
#endif
}

/* ---- entropy that outlives a connection ------------------------------- */

/*
 * Made at the first connection after boot (agent_tls_seed_boot): that
 * connection's entropy gets the seed file (without a hardware RNG) and the
 * board's IDs mixed in, its DRBG is seeded from them and its sources, and
 * the next boot's seed and then this pool are drawn from it before any key.
 * Every later connection mixes the pool into its entropy and replaces it
 * with a draw from its own seeded DRBG, so the pool changes with each
 * connection and an old value does not give later keys. Reached under
 * agent_tls_kept's lock.
 */
#define AGENT_TLS_POOL_LEN 32
static struct
{
    int made; /* 0 not yet, 1 made, -1 failed (each connection keeps its own entropy) */
    unsigned char bytes[AGENT_TLS_POOL_LEN];
} agent_tls_pool;

/* The first connection, as agent_tls_seed_boot reaches it. */
struct agent_tls_first
{
    MbedTLSSession *session;
    const unsigned char *pers;
    size_t pers_len;
    int seeded; /* 0 not yet, 1 seeded, < 0 mbedTLS's error */
};

static int agent_tls_first_mix(void *ctx, const unsigned char *data, rt_size_t len)
{
    struct agent_tls_first *f = (struct agent_tls_first *)ctx;
    return mbedtls_entropy_update_manual(&f->session->entropy, data, len);
}

/* The DRBG is seeded at the first draw, with everything mixed in by then. */
static int agent_tls_first_draw(void *ctx, unsigned char *out, rt_size_t len)
{
    struct agent_tls_first *f = (struct agent_tls_first *)ctx;
    if (f->seeded == 0)
    {
        int ret = mbedtls_ctr_drbg_seed(&f->session->ctr_drbg, mbedtls_entropy_func, &f->session->entropy,
                                        f->pers, f->pers_len);
        f->seeded = ret == 0 ? 1 : ret;
    }
    if (f->seeded != 1)
        return -1;
    return mbedtls_ctr_drbg_random(&f->session->ctr_drbg, out, len);
}

/* Seed the connection's DRBG with the pool mixed in (made at the first
 * connection) and draw the next pool; mbedTLS's result. The caller holds
 * the lock. */
static int agent_tls_seed_session(MbedTLSSession *session, const unsigned char *pers, size_t pers_len)
{
    int ret;
    if (agent_tls_pool.made == 0)
    {
        struct agent_tls_first first;
        struct agent_tls_seed_io io;
        first.session = session;
        first.pers = pers;
        first.pers_len = pers_len;
        first.seeded = 0;
        io.ctx = &first;
        io.mix = agent_tls_first_mix;
        io.draw = agent_tls_first_draw;
        /* With a hardware RNG the keys need no seed file (and the flash no
         * write at every boot). */
        agent_tls_pool.made = agent_tls_seed_boot(agent_tls_hw_rng() ? "" : agent_glue_tls_seed_file(), &io,
                                                  agent_tls_pool.bytes, AGENT_TLS_POOL_LEN) == AGENT_TLS_SEED_FAILED
                                  ? -1
                                  : 1;
        if (first.seeded == 1)
            return 0;
        if (first.seeded < 0)
            return first.seeded;
        /* Mixing failed before any draw: seeded as any connection. */
        return mbedtls_ctr_drbg_seed(&session->ctr_drbg, mbedtls_entropy_func, &session->entropy, pers, pers_len);
    }
    if (agent_tls_pool.made == 1)
        mbedtls_entropy_update_manual(&session->entropy, agent_tls_pool.bytes, AGENT_TLS_POOL_LEN);
    ret = mbedtls_ctr_drbg_seed(&session->ctr_drbg, mbedtls_entropy_func, &session->entropy, pers, pers_len);
    if (ret == 0 && agent_tls_pool.made == 1
        && mbedtls_ctr_drbg_random(&session->ctr_drbg, agent_tls_pool.bytes, AGENT_TLS_POOL_LEN) != 0)
        agent_tls_pool.made = -1;
    return ret;
}

/* ---- the clock -------------------------------------------------------- */

static int agent_tls_clock_set(void)
{
    return (long)time(RT_NULL) >= AGENT_TLS_CLOCK_EPOCH;
}

/* a < b for two certificate times (UTC) */
static int agent_tls_before(const mbedtls_x509_time *a, const mbedtls_x509_time *b)
{
    const int x[6] = { a->year, a->mon, a->day, a->hour, a->min, a->sec };
    const int y[6] = { b->year, b->mon, b->day, b->hour, b->min, b->sec };
    int i;
    for (i = 0; i < 6; i++)
    {
        if (x[i] != y[i])
            return x[i] < y[i];
    }
    return 0;
}

/* One connection's state while its handshake runs. */
struct agent_tls_conn
{
    int fd;
    int why;       /* AGENT_TLS_FAIL_* that stopped a poll, or 0 */
    int full;      /* a certificate came: a full handshake, not a resumed one */
    rt_tick_t quiet_since;
};

/* mbedTLS's verify callback, once per certificate of the chain. */
static int agent_tls_verify(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
    struct agent_tls_conn *conn = (struct agent_tls_conn *)ctx;
    time_t now = time(RT_NULL);
    (void)depth;
    if (conn)
        conn->full = 1;
    if ((long)now >= AGENT_TLS_CLOCK_EPOCH)
    {
        struct tm tm;
        mbedtls_x509_time t;
        gmtime_r(&now, &tm);
        t.year = tm.tm_year + 1900;
        t.mon = tm.tm_mon + 1;
        t.day = tm.tm_mday;
        t.hour = tm.tm_hour;
        t.min = tm.tm_min;
        t.sec = tm.tm_sec;
        if (agent_tls_before(&crt->valid_to, &t))
            *flags |= MBEDTLS_X509_BADCERT_EXPIRED;
        if (agent_tls_before(&t, &crt->valid_from))
            *flags |= MBEDTLS_X509_BADCERT_FUTURE;
    }
    return 0;
}

/* ---- time left -------------------------------------------------------- */

/* ms this poll may wait (<= AGENT_TLS_POLL_MS), or 0 with conn->why set. */
static int agent_tls_poll_ms(struct agent_tls_conn *conn)
{
    unsigned int silence = AGENT_TLS_UNWATCHED_MS;
    int left = agent_tls_budget(&silence);
    rt_uint32_t quiet;
    if (left == AGENT_TLS_BUDGET_CANCELLED)
    {
        conn->why = AGENT_TLS_FAIL_CANCELLED;
        return 0;
    }
    if (left == 0)
    {
        conn->why = AGENT_TLS_FAIL_DEADLINE;
        return 0;
    }
    quiet = (rt_tick_get() - conn->quiet_since) * 1000u / RT_TICK_PER_SECOND;
    if (quiet >= silence)
    {
        conn->why = AGENT_TLS_FAIL_SILENT;
        return 0;
    }
    if (left < 0 || left > AGENT_TLS_POLL_MS)
        left = AGENT_TLS_POLL_MS;
    return left;
}

/* Wait until fd is readable (or writable); 1 ready, 0 stop (why set). */
static int agent_tls_wait(struct agent_tls_conn *conn, int for_write)
{
    for (;;)
    {
        fd_set set;
        struct timeval tv;
        int ms = agent_tls_poll_ms(conn);
        int rc;
        if (ms == 0)
            return 0;
        FD_ZERO(&set);
        FD_SET(conn->fd, &set);
        tv.tv_sec = ms / 1000;
        tv.tv_usec = (ms % 1000) * 1000;
        rc = select(conn->fd + 1, for_write ? RT_NULL : &set, for_write ? &set : RT_NULL, RT_NULL, &tv);
        if (rc > 0)
            return 1;
        if (rc < 0 && errno != EINTR)
        {
            conn->why = AGENT_TLS_FAIL_CLOSED;
            return 0;
        }
    }
}

/* The handshake's receive: polls, so that the deadline and cleanup are
 * seen while the server is silent. */
static int agent_tls_recv(void *ctx, unsigned char *buf, size_t len)
{
    struct agent_tls_conn *conn = (struct agent_tls_conn *)ctx;
    int n;
    if (!agent_tls_wait(conn, 0))
        return MBEDTLS_ERR_SSL_TIMEOUT;
    n = recv(conn->fd, buf, len, 0);
    if (n > 0)
    {
        conn->quiet_since = rt_tick_get();
        return n;
    }
    conn->why = AGENT_TLS_FAIL_CLOSED;
    return n == 0 ? MBEDTLS_ERR_SSL_CONN_EOF : MBEDTLS_ERR_NET_RECV_FAILED;
}

static int agent_tls_send(void *ctx, const unsigned char *buf, size_t len)
{
    struct agent_tls_conn *conn = (struct agent_tls_conn *)ctx;
    int n;
    if (!agent_tls_wait(conn, 1))
        return MBEDTLS_ERR_SSL_TIMEOUT;
    n = send(conn->fd, buf, len, 0);
    if (n >= 0)
        return n;
    conn->why = AGENT_TLS_FAIL_CLOSED;
    return MBEDTLS_ERR_NET_SEND_FAILED;
}

static int agent_tls_set_nonblocking(int fd, int on)
{
    unsigned long v = on ? 1 : 0;
    return ioctlsocket(fd, FIONBIO, &v);
}

/* A TCP connection to host:port within the budget; the fd, or -1 (why set). */
static int agent_tls_tcp(struct agent_tls_conn *conn, const char *host, const char *port)
{
    struct addrinfo hints, *list = RT_NULL, *cur;
    int fd = -1;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    if (getaddrinfo(host, port, &hints, &list) != 0 || list == RT_NULL)
    {
        conn->why = AGENT_TLS_FAIL_CONNECT;
        return -1;
    }
    for (cur = list; cur != RT_NULL && conn->why == 0; cur = cur->ai_next)
    {
        int err = 0;
        socklen_t err_len = sizeof(err);
        fd = socket(cur->ai_family, cur->ai_socktype, cur->ai_protocol);
        if (fd < 0)
            continue;
        conn->fd = fd;
        conn->quiet_since = rt_tick_get();
        if (agent_tls_set_nonblocking(fd, 1) == 0)
        {
            if (connect(fd, cur->ai_addr, cur->ai_addrlen) == 0
                || ((errno == EINPROGRESS || errno == EWOULDBLOCK) && agent_tls_wait(conn, 1)
                    && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) == 0 && err == 0))
            {
                agent_tls_set_nonblocking(fd, 0);
                break;
            }
        }
        closesocket(fd);
        fd = -1;
    }
    freeaddrinfo(list);
    if (fd < 0 && conn->why == 0)
        conn->why = AGENT_TLS_FAIL_CONNECT;
    return fd;
}

/* ---- the kept session ------------------------------------------------- */

/* Its lock also guards agent_tls_pool. */
static struct
{
    struct rt_mutex lock;
    int made;
    int valid;
    char host[64];
    char port[8];
    mbedtls_ssl_session session;
} agent_tls_kept;

static void agent_tls_kept_lock(void)
{
    if (!agent_tls_kept.made)
    {
        rt_enter_critical();
        if (!agent_tls_kept.made)
        {
            rt_mutex_init(&agent_tls_kept.lock, "aTls", RT_IPC_FLAG_PRIO);
            agent_tls_kept.made = 1;
        }
        rt_exit_critical();
    }
    rt_mutex_take(&agent_tls_kept.lock, RT_WAITING_FOREVER);
}

static int agent_tls_kept_matches(const MbedTLSSession *s)
{
    return agent_tls_kept.valid && s->host && s->port
        && strcmp(agent_tls_kept.host, s->host) == 0 && strcmp(agent_tls_kept.port, s->port) == 0;
}

void agent_tls_forget(void)
{
    if (!agent_tls_kept.made)
        return;
    agent_tls_kept_lock();
    if (agent_tls_kept.valid)
        mbedtls_ssl_session_free(&agent_tls_kept.session);
    agent_tls_kept.valid = 0;
    rt_mutex_release(&agent_tls_kept.lock);
}

/* ---- what webclient calls (through --wrap) ---------------------------- */

int __wrap_mbedtls_client_init(MbedTLSSession *session, void *pers, size_t pers_len)
{
    unsigned char seed[48];
    size_t extra;
    int ret;
    mbedtls_net_init(&session->server_fd);
    mbedtls_ssl_init(&session->ssl);
    mbedtls_ssl_config_init(&session->conf);
    mbedtls_ctr_drbg_init(&session->ctr_drbg);
    mbedtls_entropy_init(&session->entropy);
    mbedtls_x509_crt_init(&session->cacert);
    agent_tls_add_sources(&session->entropy);
    /* The personalisation: the caller's string and what varies per boot. */
    extra = pers_len < 16 ? pers_len : 16;
    memcpy(seed, pers, extra);
    agent_tls_weak(seed + extra, 32);
    agent_tls_kept_lock();
    ret = agent_tls_seed_session(session, seed, extra + 32);
    rt_mutex_release(&agent_tls_kept.lock);
    mbedtls_platform_zeroize(seed, sizeof(seed));
    return ret;
}

int __wrap_mbedtls_client_context(MbedTLSSession *session)
{
    int ret = mbedtls_x509_crt_parse(&session->cacert, (const unsigned char *)mbedtls_root_certificate,
                                     mbedtls_root_certificate_len);
    if (ret < 0)
        return ret;
    if (session->host && (ret = mbedtls_ssl_set_hostname(&session->ssl, session->host)) != 0)
        return ret;
    ret = mbedtls_ssl_config_defaults(&session->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                      MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret != 0)
        return ret;
    mbedtls_ssl_conf_authmode(&session->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&session->conf, &session->cacert, RT_NULL);
    mbedtls_ssl_conf_rng(&session->conf, mbedtls_ctr_drbg_random, &session->ctr_drbg);
    mbedtls_ssl_conf_verify(&session->conf, agent_tls_verify, RT_NULL);
    return mbedtls_ssl_setup(&session->ssl, &session->conf);
}

static int agent_tls_classify(struct agent_tls_conn *conn, MbedTLSSession *session, int ret)
{
    uint32_t flags;
    if (conn->why)
        return conn->why;
    if (ret == MBEDTLS_ERR_SSL_CONN_EOF || ret == MBEDTLS_ERR_NET_CONN_RESET
        || ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY)
        return AGENT_TLS_FAIL_CLOSED;
    flags = mbedtls_ssl_get_verify_result(&session->ssl);
    if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags != (uint32_t)-1)
    {
        if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
            return AGENT_TLS_FAIL_CA;
        if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH)
            return AGENT_TLS_FAIL_NAME;
        if (flags & MBEDTLS_X509_BADCERT_EXPIRED)
            return AGENT_TLS_FAIL_EXPIRED;
        if (flags & MBEDTLS_X509_BADCERT_FUTURE)
            return AGENT_TLS_FAIL_FUTURE;
        return AGENT_TLS_FAIL_CA;
    }
    return AGENT_TLS_FAIL_HANDSHAKE;
}

int __wrap_mbedtls_client_connect(MbedTLSSession *session)
{
    struct agent_tls_conn conn;
    rt_tick_t start = rt_tick_get();
    char line[120];
    int ret, resumed_offer = 0;

    memset(&conn, 0, sizeof(conn));
    conn.fd = -1;
    session->server_fd.fd = agent_tls_tcp(&conn, session->host, session->port);
    if (session->server_fd.fd < 0)
    {
        agent_tls_note(conn.why, 0);
        return MBEDTLS_ERR_NET_CONNECT_FAILED;
    }
    conn.fd = session->server_fd.fd;
    conn.quiet_since = rt_tick_get();
    mbedtls_ssl_conf_verify(&session->conf, agent_tls_verify, &conn);
    agent_tls_kept_lock();
    if (agent_tls_kept_matches(session) && mbedtls_ssl_set_session(&session->ssl, &agent_tls_kept.session) == 0)
        resumed_offer = 1;
    rt_mutex_release(&agent_tls_kept.lock);
    mbedtls_ssl_set_bio(&session->ssl, &conn, agent_tls_send, agent_tls_recv, RT_NULL);

    do
        ret = mbedtls_ssl_handshake(&session->ssl);
    while (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE);

    /* From here on webclient reads with its own socket timeouts, as the
     * package's connect leaves it. */
    mbedtls_ssl_set_bio(&session->ssl, &session->server_fd, mbedtls_net_send, mbedtls_net_recv, RT_NULL);
    mbedtls_ssl_conf_verify(&session->conf, agent_tls_verify, RT_NULL);
    if (ret != 0)
    {
        int why = agent_tls_classify(&conn, session, ret);
        agent_tls_note(why, ret);
        rt_snprintf(line, sizeof(line), "TLS: handshake with %s:%s failed (-0x%04x, reason %d) after %u ms",
                    session->host, session->port, (unsigned)-ret, why,
                    (unsigned)((rt_tick_get() - start) * 1000u / RT_TICK_PER_SECOND));
        agent_glue_log(4, line);
        return ret;
    }
    if (conn.full)
    {
        agent_tls_kept_lock();
        if (agent_tls_kept.valid)
            mbedtls_ssl_session_free(&agent_tls_kept.session);
        mbedtls_ssl_session_init(&agent_tls_kept.session);
        agent_tls_kept.valid = 0;
        if (strlen(session->host) < sizeof(agent_tls_kept.host) && strlen(session->port) < sizeof(agent_tls_kept.port)
            && mbedtls_ssl_get_session(&session->ssl, &agent_tls_kept.session) == 0)
        {
            strcpy(agent_tls_kept.host, session->host);
            strcpy(agent_tls_kept.port, session->port);
            agent_tls_kept.valid = 1;
        }
        else
            mbedtls_ssl_session_free(&agent_tls_kept.session);
        rt_mutex_release(&agent_tls_kept.lock);
    }
    rt_snprintf(line, sizeof(line), "TLS: %s with %s:%s in %u ms",
                conn.full ? (resumed_offer ? "full handshake (resumption refused)" : "full handshake")
                          : "session resumed",
                session->host, session->port,
                (unsigned)((rt_tick_get() - start) * 1000u / RT_TICK_PER_SECOND));
    agent_glue_log(6, line);
    return 0;
}

int __wrap_mbedtls_client_read(MbedTLSSession *session, unsigned char *buf, size_t len)
{
    int ret;
    if (session == RT_NULL || buf == RT_NULL)
        return -RT_ERROR;
    ret = mbedtls_ssl_read(&session->ssl, buf, len);
    if (ret == MBEDTLS_ERR_SSL_BAD_INPUT_DATA || ret == MBEDTLS_ERR_SSL_INVALID_RECORD)
        agent_tls_note(AGENT_TLS_FAIL_RECORD, ret);
    return ret;
}

/* The start log: what this firmware's HTTPS does not protect against. */
void agent_tls_report(void)
{
    char line[200];
    if (MBEDTLS_SSL_IN_CONTENT_LEN < AGENT_TLS_RECORD_MAX)
    {
        rt_snprintf(line, sizeof(line),
                    "TLS: mbedTLS takes records of at most %d bytes, servers send up to 16384: large answers "
                    "will fail (set MBEDTLS_SSL_MAX_CONTENT_LEN to 16384)",
                    (int)MBEDTLS_SSL_IN_CONTENT_LEN);
        agent_glue_log(4, line);
    }
    if (!agent_tls_clock_set())
        agent_glue_log(4, "TLS: the clock is not set: certificate dates are not checked "
                          "(set the time from an RTC or NTP to have them checked)");
    if (!agent_tls_hw_rng())
    {
        const char *seed = agent_glue_tls_seed_file();
        if (seed[0] == '\0')
            agent_glue_log(4, "TLS: no hardware RNG and no seed file: TLS keys are predictable (enable "
                              "RT-Thread's hwcrypto RNG, name one in PKG_AGENT_TLS_RNG_FUNC, or set "
                              "PKG_AGENT_TLS_SEED_FILE on a file system)");
        else
        {
            rt_snprintf(line, sizeof(line),
                        "TLS: no hardware RNG: keys are seeded from %s, renewed at each boot; a first boot, "
                        "before the file exists, has weak keys",
                        seed);
            agent_glue_log(4, line);
        }
    }
}

#else /* no HTTPS through webclient's mbedTLS mode */

void agent_tls_report(void)
{
}

void agent_tls_forget(void)
{
}

#endif
