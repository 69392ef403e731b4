/* wn_module.h of the host port (see webnet.h): the CGI module. */
#ifndef __WN_MODULE_H__
#define __WN_MODULE_H__

#include <webnet.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WEBNET_MODULE_CONTINUE 0
#define WEBNET_MODULE_FINISHED 1

/* A handler for /cgi-bin/<name> (the name is matched whole, ignoring case);
 * `name` is kept, not copied. Handlers run on the webnet thread, one at a
 * time. */
void webnet_cgi_register(const char *name, void (*handler)(struct webnet_session *session));
void webnet_cgi_set_root(const char *root);

#ifdef __cplusplus
}
#endif

#endif
