/*
 * utils.h's multimodal block from C, as firmware code written for the C
 * package calls it: the file-operation thread and its queues, agent_up_load,
 * down_load, and to_content with image items, against the scripted file
 * server whose upload and download URLs are argv[1] and argv[2].
 */
#define PKG_AGENT_MULTIMODAL_ENABLE 1
#include <rtthread.h>
#include <rt_host.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "MessageHub.h"
#include "utils.h"
#include "check.h"

static void write_file(const char *path, size_t len)
{
    FILE *f = fopen(path, "wb");
    for (size_t i = 0; f && i < len; i++)
        fputc((int)((i * 7 + 3) & 0xff), f);
    if (f)
        fclose(f);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (f)
        fclose(f);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3)
    {
        fprintf(stderr, "usage: test_multimodal UPLOAD_URL DOWNLOAD_URL\n");
        return 2;
    }
    const char *up = argv[1], *down = argv[2];
    char image[] = "/tmp/rtt-agent-mm-XXXXXX";
    int fd = mkstemp(image);
    CHECK(fd >= 0);
    close(fd);
    char png[64], copy[64];
    snprintf(png, sizeof png, "%s.png", image);
    snprintf(copy, sizeof copy, "%s-copy.png", image);
    write_file(png, 1500);
    rt_size_t baseline = heap_used();
    rt_host_multimodal_set(1, up, down, 0);

    /* The thread and its queues. */
    CHECK(get_agent_file_op_mq_input() == RT_NULL);
    rt_thread_t t = agent_file_op_init();
    CHECK(t != RT_NULL);
    CHECK(agent_file_op_init() == t);
    rt_mq_t in = get_agent_file_op_mq_input(), out = get_agent_file_op_mq_output();
    CHECK(in != RT_NULL && out != RT_NULL && in != out);

    /* An upload through the queues, as C code of the C package posts it. */
    file_op_req req;
    memset(&req, 0, sizeof req);
    req.op = CMD_AGENT_FILE_UPLOAD;
    strncpy(req.path, png, sizeof req.path - 1);
    CHECK(rt_mq_send(in, &req, sizeof req) == RT_EOK);
    file_op_req answer;
    memset(&answer, 0, sizeof answer);
    CHECK(rt_mq_recv(out, &answer, sizeof answer, 30000) == (rt_ssize_t)sizeof answer);
    CHECK(answer.op == CMD_AGENT_FILE_URL);
    CHECK(strlen(answer.file_id) == 36);
    CHECK(strncmp(answer.path, down, strlen(down)) == 0);
    CHECK(strcmp(answer.path + strlen(down) + 1, answer.file_id) == 0);

    /* agent_up_load: the URL in a static buffer; "" for a missing file. */
    const char *url = agent_up_load(png);
    CHECK(url != RT_NULL && strncmp(url, down, strlen(down)) == 0 && strlen(url) == strlen(down) + 1 + 36);
    char first[160];
    snprintf(first, sizeof first, "%s", url ? url : "");
    CHECK_STR(agent_up_load("/no/such/file.png"), "");
    CHECK(agent_up_load(RT_NULL) == RT_NULL);

    /* down_load: queued, then the thread writes the file. */
    CHECK(down_load(copy, answer.file_id) == RT_EOK);
    long got = -1;
    for (int i = 0; i < 400 && got != 1500; i++)
    {
        rt_thread_mdelay(10);
        got = file_size(copy);
    }
    CHECK(got == 1500);
    CHECK(down_load(RT_NULL, "x") != RT_EOK);

    /* to_content: one part per item; the image uploaded. */
    Messages_t m = messages_create(2);
    messages_append(m, TYPE_TEXT, "what is it?");
    messages_append(m, TYPE_IMAGE, png);
    cJSON *content = to_content(m);
    CHECK(cJSON_IsArray(content) && cJSON_GetArraySize(content) == 2);
    cJSON *text = cJSON_GetArrayItem(content, 0);
    cJSON *img = cJSON_GetArrayItem(content, 1);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(text, "type")), "text");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(text, "text")), "what is it?");
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(img, "type")), "image_url");
    const char *img_url = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(img, "image_url"), "url"));
    CHECK(img_url && strncmp(img_url, down, strlen(down)) == 0 && strcmp(img_url, first) != 0);
    cJSON_Delete(content);

    /* Inline: the part's url item is the path to C code that reads it (the
     * data: URL is written into the request from the file). */
    rt_host_multimodal_set(2, RT_NULL, RT_NULL, 0);
    content = to_content(m);
    img = cJSON_GetArrayItem(content, 1);
    CHECK_STR(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(img, "image_url"), "url")), png);
    cJSON_Delete(content);
    /* A missing file: no content at all. */
    Messages_t bad = messages_create(1);
    messages_append(bad, TYPE_IMAGE, "/no/such/file.png");
    CHECK(to_content(bad) == RT_NULL);
    messages_destroy(bad);
    messages_destroy(m);

    agent_file_op_deinit();
    CHECK(get_agent_file_op_mq_input() == RT_NULL && get_agent_file_op_mq_output() == RT_NULL);
    CHECK(down_load(copy, answer.file_id) != RT_EOK);
    agent_file_op_deinit();
    rt_host_multimodal_set(-1, RT_NULL, RT_NULL, 0);
    rt_size_t after = heap_used();
    if (after != baseline)
        fprintf(stderr, "heap: %lu before, %lu after\n", (unsigned long)baseline, (unsigned long)after);
    CHECK(after == baseline);
    remove(png);
    remove(copy);
    remove(image);
    return CHECK_DONE();
}
