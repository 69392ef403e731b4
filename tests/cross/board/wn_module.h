/* Stand-in wn_module.h (see webnet.h): the CGI module. */
#ifndef __WN_MODULE_H__
#define __WN_MODULE_H__

#include <webnet.h>
#include <wn_session.h>

void webnet_cgi_register(const char *name, void (*handler)(struct webnet_session *session));

#endif
