/*
 * AgentAudio.h (PKG_AGENT_DRIVER_AUDIO): play and record WAV files by
 * running the wavplayer package's MSH commands. The commands are found at
 * run time, so this links with the shell alone; playing needs wavplayer
 * and an audio device (RT_USING_AUDIO), recording its record support.
 */
#include <rtthread.h>

#ifdef PKG_AGENT_DRIVER_AUDIO
#ifndef RT_USING_MSH
#error "PKG_AGENT_DRIVER_AUDIO runs wavplayer's MSH commands: enable RT_USING_MSH"
#endif
#include <string.h>
#include <msh.h>
#include "AgentAudio.h"
#include "agent_glue.h"

const char *agent_audio_cmd[] = {"wavplay", "wavrecord"};
const char *agent_audio_option[] = {"-s", "-t", "-p", "-r"};

/* Longest command line: the command, its flags, a path and the format. */
#ifdef DFS_PATH_MAX
#define AUDIO_LINE_MAX (32 + DFS_PATH_MAX)
#else
#define AUDIO_LINE_MAX (32 + 256)
#endif

/* msh_exec splits the line in place: it gets a writable copy. */
static int run_line(char *line)
{
    return msh_exec(line, rt_strlen(line));
}

static int run(AgentWavCmd cmd, AgentWavOption option, const char *arg)
{
    char line[AUDIO_LINE_MAX];
    int n = rt_snprintf(line, sizeof(line), "%s %s%s%s", agent_audio_cmd[cmd],
                        agent_audio_option[option], arg ? " " : "", arg ? arg : "");
    if (n < 0 || n >= (int)sizeof(line))
    {
        return -RT_EINVAL;
    }
    return run_line(line);
}

int agent_driver_audio_play(const char *path)
{
    if (path == RT_NULL)
    {
        return -RT_EINVAL;
    }
    return run(AGENT_WAV_PLAY, AGENT_WAV_START, path);
}

int agent_driver_audio_stop(void)
{
    return run(AGENT_WAV_PLAY, AGENT_WAV_STOP, RT_NULL);
}

int agent_driver_audio_pause(void)
{
    return run(AGENT_WAV_PLAY, AGENT_WAV_PAUSE, RT_NULL);
}

int agent_driver_audio_resume(void)
{
    return run(AGENT_WAV_PLAY, AGENT_WAV_RESUME, RT_NULL);
}

int agent_driver_audio_set_volume(int vol)
{
    char line[32];
    if (vol < 0)
    {
        vol = 0;
    }
    if (vol > 99)
    {
        vol = 99;
    }
    rt_snprintf(line, sizeof(line), "%s -v %d", agent_audio_cmd[AGENT_WAV_PLAY], vol);
    return run_line(line);
}

/* wavrecord blocks while it records: it runs on a thread of its own, which
 * frees its line when the command returns. */
static void record_entry(void *parameter)
{
    char *line = (char *)parameter;
    run_line(line);
    rt_free(line);
}

int agent_driver_audio_record(const char *path)
{
    char *line;
    rt_thread_t thread;
    if (path == RT_NULL)
    {
        return -RT_EINVAL;
    }
    line = (char *)rt_malloc(AUDIO_LINE_MAX);
    if (line == RT_NULL)
    {
        return -RT_ENOMEM;
    }
    if (rt_snprintf(line, AUDIO_LINE_MAX, "%s %s %s %d %d %d", agent_audio_cmd[AGENT_WAV_RECORD],
                    agent_audio_option[AGENT_WAV_START], path, REC_SAMPLE_RATE, REC_CHANNELS,
                    REC_SAMPLE_BITS) >= AUDIO_LINE_MAX)
    {
        rt_free(line);
        return -RT_EINVAL;
    }
    thread = rt_thread_create("AgRec", record_entry, line, 2048, RT_THREAD_PRIORITY_MAX / 2, 20);
    if (thread == RT_NULL)
    {
        rt_free(line);
        return -RT_ENOMEM;
    }
    rt_thread_startup(thread);
    return RT_EOK;
}

int agent_driver_audio_record_stop(void)
{
    return run(AGENT_WAV_RECORD, AGENT_WAV_STOP, RT_NULL);
}
#endif /* PKG_AGENT_DRIVER_AUDIO */
