// Opening a voice session: the session's token, the microphone as 16 kHz PCM through an audio
// worklet, and the session's WebSocket carrying it; and releasing all of that again.
import { api, unwrap } from '../../api/client';
import workletUrl from '../../voice/pcm-capture-worklet.js?url';
import { AnswerPlayer } from './answer-player';
import { parseVoiceEvent, type VoiceEvent } from './voice-events';

const sampleRate = 16000;

export interface Resources {
  socket: WebSocket | null;
  context: AudioContext | null;
  stream: MediaStream | null;
  player: AnswerPlayer | null;
}

export const noResources = (): Resources => ({
  socket: null,
  context: null,
  stream: null,
  player: null,
});

export interface ConnectionHandlers {
  onEvent: (message: VoiceEvent) => void;
  onClose: () => void;
  onSpeaking: (speaking: boolean) => void;
}

/**
 * Opens a session and streams the microphone into it. `keep` receives the resources as soon as the
 * socket exists, so that a failure after that point can release them.
 */
export async function openVoiceSession(
  model: string | null,
  handlers: ConnectionHandlers,
  keep: (resources: Resources) => void,
): Promise<void> {
  const session = unwrap(
    await api.POST('/v1/voice/sessions', {
      body: {
        user_id: 'dashboard',
        language_code: 'en-US',
        sample_rate: sampleRate,
        ...(model === null ? {} : { model }),
      },
    }),
  );
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
  });
  const context = new AudioContext({ sampleRate });
  await context.audioWorklet.addModule(workletUrl);
  const url = new URL(session.websocket_url, window.location.href);
  url.searchParams.set('token', session.token);
  const socket = new WebSocket(url);
  socket.binaryType = 'arraybuffer';
  keep({ socket, context, stream, player: new AnswerPlayer(context, handlers.onSpeaking) });
  socket.onmessage = (event: MessageEvent) => {
    if (typeof event.data !== 'string') return;
    const message = parseVoiceEvent(event.data);
    if (message !== null) handlers.onEvent(message);
  };
  socket.onclose = () => handlers.onClose();
  await new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error('The voice WebSocket could not be opened.'));
  });
  const microphone = context.createMediaStreamSource(stream);
  const capture = new AudioWorkletNode(context, 'pcm-capture');
  capture.port.onmessage = (event: MessageEvent<ArrayBuffer>) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(event.data);
  };
  microphone.connect(capture);
}

/** Stops the answer, closes the socket, the microphone and the audio context. */
export function release({ socket, context, stream, player }: Resources): void {
  player?.stop();
  if (socket !== null && socket.readyState <= WebSocket.OPEN) socket.close();
  stream?.getTracks().forEach((track) => track.stop());
  void context?.close().catch(() => undefined);
}
