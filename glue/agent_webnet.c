/*
 * The WebNet channel's C half: what Rust cannot see of WebNet. The layouts
 * of struct webnet_session and struct webnet_request depend on WebNet's own
 * options (range, DAV, gzip, cache level), so only C, compiled with the
 * board's webnet headers, reads their members; the library calls these
 * functions and WebNet's API through them. WebNet is GPL-2.0 (or
 * commercial): this file only calls it.
 *
 * Compiled with PKG_AGENT_WEBNET_CHANNEL or PKG_AGENT_ALSO_WEBNET_CHANNEL
 * (the SConscript adds it then) and
 * in the host port (AGENT_ALL_PARTS), which has a WebNet of its own.
 */
#include <rtthread.h>
#include <rtconfig.h>

#if defined(PKG_AGENT_WEBNET_CHANNEL) || defined(PKG_AGENT_ALSO_WEBNET_CHANNEL) || defined(AGENT_ALL_PARTS)
#include <webnet.h>
#include <wn_module.h>
#include <wn_request.h>
#include <wn_session.h>
#include <errno.h>
#include <string.h>
#include <sys/time.h>
#ifdef __linux__
#include <sys/socket.h> /* on a board, wn_session.h has the socket API */
#endif
#include "agent_glue.h"

#ifndef SHUT_WR
#define SHUT_WR 1 /* SAL's and lwIP's value, and Linux's */
#endif

#ifndef PKG_AGENT_WEB_TOKEN
#define PKG_AGENT_WEB_TOKEN ""
#endif

static void cgi_chat(struct webnet_session *session) { agent_web_cgi(session, AGENT_WEB_CHAT); }
static void cgi_config(struct webnet_session *session) { agent_web_cgi(session, AGENT_WEB_CONFIG); }
static void cgi_get_config(struct webnet_session *session) { agent_web_cgi(session, AGENT_WEB_GET_CONFIG); }
static void cgi_cleanup(struct webnet_session *session) { agent_web_cgi(session, AGENT_WEB_CLEANUP); }
static void cgi_page(struct webnet_session *session) { agent_web_cgi(session, AGENT_WEB_PAGE); }

static rt_bool_t registered;

int agent_glue_web_start(void)
{
    /* WebNet cannot unregister a CGI nor stop its thread: both happen once,
     * and the handlers answer "stopped" while the agent is not running. */
    if (registered)
        return 0;
    webnet_cgi_register("chat", cgi_chat);
    webnet_cgi_register("config", cgi_config);
    webnet_cgi_register("get_config", cgi_get_config);
    webnet_cgi_register("cleanup", cgi_cleanup);
    webnet_cgi_register("agent", cgi_page);
    registered = RT_TRUE;
    return webnet_init();
}

const char *agent_glue_web_token(void)
{
    return PKG_AGENT_WEB_TOKEN;
}

int agent_glue_web_open_chat(void)
{
#ifdef PKG_AGENT_WEB_OPEN_CHAT
    return 1;
#else
    return 0;
#endif
}

int agent_glue_web_peer(struct webnet_session *session, unsigned char *addr)
{
    /* WebNet's accept() filled cliaddr (IPv4: WebNet listens on AF_INET).
     * sin_addr's four bytes in network order, whatever its C type (lwIP's
     * struct in_addr, or a plain 32-bit member in other socket headers). */
    const unsigned char *ip = (const unsigned char *)&session->cliaddr.sin_addr;
    memcpy(addr, ip, 4);
    return 4;
}

int agent_glue_web_port(void)
{
    return webnet_get_port();
}

int agent_glue_web_method(struct webnet_session *session)
{
    switch (session->request->method)
    {
    case WEBNET_GET:
        return AGENT_WEB_GET;
    case WEBNET_POST:
        return AGENT_WEB_POST;
    default:
        return AGENT_WEB_OTHER;
    }
}

/* Did WebNet read the request's body? It reads a POST body into `query`
 * only when it is shorter than its POST_BUFSZ_MAX (8 KB) and not multipart,
 * counting the bytes in query_offset up to content_length; `query` then
 * holds exactly content_length bytes and a NUL. Otherwise `query` is the
 * URL's query string (or RT_NULL), which is not a body. */
static rt_bool_t body_read(struct webnet_request *request)
{
    return request->method == WEBNET_POST && request->content_length > 0 && request->query != RT_NULL
        && request->query_offset == request->content_length;
}

const char *agent_glue_web_body(struct webnet_session *session, int *declared_length)
{
    struct webnet_request *request = session->request;
    *declared_length = request->content_length;
    return body_read(request) ? request->query : RT_NULL;
}

/* Bytes of the declared body that WebNet left in the socket: none when it
 * read the body; else the declared length less what came with the head
 * (WebNet keeps those in the session's buffer, buffer_offset of them). */
int agent_glue_web_unread(struct webnet_session *session)
{
    struct webnet_request *request = session->request;
    int buffered = session->buffer_offset;
    if (request->content_length <= 0 || body_read(request))
        return 0;
    if (buffered > request->content_length)
        buffered = request->content_length;
    return request->content_length - buffered;
}

/* The channel's lingering close (src/wire/http_drain.rs) on WebNet's
 * socket of the session, which WebNet closes when the handler returns:
 * the answer, then the end of the stream (FIN) go out; reads go on, each
 * waiting at most poll_ms (WebNet's sockets have no timeout). */
void agent_glue_web_linger(struct webnet_session *session, int poll_ms)
{
    struct timeval tv;
    if (poll_ms < 1)
        poll_ms = 1;
    tv.tv_sec = poll_ms / 1000;
    tv.tv_usec = (poll_ms % 1000) * 1000;
    (void)shutdown(session->socket, SHUT_WR);
    (void)setsockopt(session->socket, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* One read of the session's socket: > 0 bytes read; 0 the client closed or
 * the connection failed (lwIP keeps a reset's error: see agent_mcp_recv);
 * < 0 nothing yet (the timeout). */
int agent_glue_web_recv(struct webnet_session *session, void *buf, int len)
{
    int n = (int)recv(session->socket, buf, (size_t)len, 0);
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
        return 0;
    return n;
}

const char *agent_glue_web_query(struct webnet_session *session, const char *name)
{
    if (session->request->method != WEBNET_GET)
        return RT_NULL; /* a POST body replaced the URL's query */
    return webnet_request_get_query(session->request, (char *)name);
}

void agent_glue_web_header(struct webnet_session *session, const char *mimetype, int code,
                           const char *status, int length)
{
    webnet_session_set_header(session, mimetype, code, status, length);
}

void agent_glue_web_write(struct webnet_session *session, const char *data, rt_size_t size)
{
    webnet_session_write(session, (const rt_uint8_t *)data, size);
}

#endif
