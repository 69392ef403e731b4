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
#include <string.h>
#include "agent_glue.h"

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

const char *agent_glue_web_body(struct webnet_session *session, int *declared_length)
{
    struct webnet_request *request = session->request;
    *declared_length = request->content_length;
    /* WebNet reads a body into `query` only when it is shorter than its
     * POST_BUFSZ_MAX (8 KB) and not multipart; `query` then holds exactly
     * content_length bytes and a NUL. Without a body, `query` is the URL's
     * query string, which is not a body. */
    if (request->method != WEBNET_POST || request->content_length <= 0)
        return RT_NULL;
    return request->query;
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
