/*
 * utils.h - JSON builders for tool definitions and message content, and the
 * print hooks handed to chat(). Implemented in Rust (src/ffi/utils.rs).
 * Builders take ownership of the trees passed to them (deleted on failure).
 */
#ifndef __AGENT_UTILS_H__
#define __AGENT_UTILS_H__

#include <rtconfig.h>
#include <rtthread.h>
#include "cJSON.h"
#include "webclient.h"
#include <string.h>
#include "MessageHub.h"

#ifdef __cplusplus
extern "C" {
#endif

cJSON *format_text(const char *text);
cJSON *create_content_array(void);
cJSON *to_content(Messages_t messages);
void print_reasoning(const char *text);
void print_tool_call(const char *text);
void print_context(const char *text);
cJSON *create_tool_item(const char *func_name, const char *desc, cJSON *params_obj);
cJSON *create_param_obj(cJSON *props_obj, cJSON *required_arr);
void create_property(cJSON *props_obj, const char *name, const char *type, const char *desc);

/* New: writes v as plain decimal text ("7", "-2.5", "0.333333") into buf
 * without printf's %f, which the kernel's small vsnprintf does not support.
 * Returns the length written (the text is always NUL-terminated when size>0). */
int agent_format_number(char *buf, size_t size, double v);

/* Hand text from an event source (an MQTT message, a sensor, a timer) to
 * the running agent as a user message; it is answered in turn, after the
 * message being answered now. The text is copied. Returns RT_EOK once it
 * is queued; RT_ERROR (positive, as in the C package) when text is NULL or
 * empty, no agent loop runs, there is no memory, or the input mailbox is
 * full: the caller keeps or drops the text. */
rt_err_t agent_inject_text(const char *text);

#ifdef PKG_AGENT_MULTIMODAL_ENABLE
typedef enum
{
    CMD_AGENT_FILE_UPLOAD,
    CMD_AGENT_FILE_DOWNLOAD,
    CMD_AGENT_FILE_EXIT,
    CMD_AGENT_FILE_EXIT_COMPLETE,
    CMD_AGENT_FILE_URL
} file_op_type_t;

typedef struct
{
    file_op_type_t op;
    char path[128];
    char file_id[128];
} file_op_req;

rt_thread_t agent_file_op_init(void);
void agent_file_op_deinit(void);
char *agent_up_load(const char *path);
rt_err_t down_load(const char *path, const char *file_id);
rt_mq_t get_agent_file_op_mq_input(void);
rt_mq_t get_agent_file_op_mq_output(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_UTILS_H__ */
