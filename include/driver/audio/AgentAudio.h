/*
 * AgentAudio.h - play and record WAV files from tools (the newest C
 * package's audio driver). Each call runs the wavplayer package's MSH
 * commands (wavplay, wavrecord) on the board's audio device; built with
 * PKG_AGENT_DRIVER_AUDIO (glue/agent_audio.c). Every function returns the
 * command's result: 0 (RT_EOK) when it ran, a negative error otherwise.
 */
#ifndef __AGENT_AUDIO_H__
#define __AGENT_AUDIO_H__

#include <rtthread.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum
{
    AGENT_WAV_PLAY,
    AGENT_WAV_RECORD,
} AgentWavCmd;

typedef enum
{
    AGENT_WAV_START,
    AGENT_WAV_STOP,
    AGENT_WAV_PAUSE,
    AGENT_WAV_RESUME
} AgentWavOption;

typedef struct
{
    AgentWavCmd cmd;
    AgentWavOption option;
} AgentAudio;

/* The command of each AgentWavCmd ("wavplay", "wavrecord") and the flag of
 * each AgentWavOption ("-s", "-t", "-p", "-r"), indexed by the enums. */
extern const char *agent_audio_cmd[];
extern const char *agent_audio_option[];

/* What agent_driver_audio_record records. */
#define REC_SAMPLE_RATE 16000
#define REC_CHANNELS 2
#define REC_SAMPLE_BITS 16

/* Play the WAV file at path (-RT_EINVAL for NULL). */
int agent_driver_audio_play(const char *path);
int agent_driver_audio_stop(void);
int agent_driver_audio_pause(void);
int agent_driver_audio_resume(void);
/* Volume 0..99 (clamped). */
int agent_driver_audio_set_volume(int vol);
/* Record into path in the background (its own thread), until
 * agent_driver_audio_record_stop; RT_EOK once the recording thread runs. */
int agent_driver_audio_record(const char *path);
int agent_driver_audio_record_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* __AGENT_AUDIO_H__ */
