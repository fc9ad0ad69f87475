// A voice session: streams the microphone as 16 kHz PCM over the session's WebSocket, keeps the
// transcript, plays the spoken answer, and stops playing at once when the service says the user spoke
// over it (barge-in). Leaving the page closes the socket and the microphone.
import { useEffect, useRef, useState } from 'react';
import { api, unwrap } from '../../api/client';
import workletUrl from '../../voice/pcm-capture-worklet.js?url';
import {
  base64ToBytes,
  parseVoiceEvent,
  withAnswer,
  withTranscript,
  type Line,
  type VoiceEvent,
} from './voice-events';

const sampleRate = 16000;

interface Resources {
  socket: WebSocket | null;
  context: AudioContext | null;
  stream: MediaStream | null;
  playing: AudioBufferSourceNode[];
  playAt: number;
}

const noResources = (): Resources => ({
  socket: null,
  context: null,
  stream: null,
  playing: [],
  playAt: 0,
});

/** The answer's audio as a buffer: raw 16-bit PCM at its rate, or a format the browser decodes. */
async function audioBufferOf(
  context: AudioContext,
  message: Extract<VoiceEvent, { type: 'audio_response' }>,
): Promise<AudioBuffer> {
  const bytes = base64ToBytes(message.audio);
  if (message.format !== 'pcm') return context.decodeAudioData(bytes.slice().buffer);
  const samples = new Int16Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.byteLength / 2));
  const buffer = context.createBuffer(1, samples.length, message.sample_rate);
  const channel = buffer.getChannelData(0);
  for (let index = 0; index < samples.length; index += 1)
    channel[index] = (samples[index] ?? 0) / 0x8000;
  return buffer;
}

export function useVoiceSession() {
  const [state, setState] = useState<'idle' | 'connecting' | 'live'>('idle');
  const [lines, setLines] = useState<Line[]>([]);
  const [interrupted, setInterrupted] = useState(0);
  const [speaking, setSpeaking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const resources = useRef<Resources>(noResources());

  function stopPlayback() {
    for (const source of resources.current.playing) {
      try {
        source.stop();
      } catch {
        // already ended
      }
    }
    resources.current.playing = [];
    resources.current.playAt = 0;
    setSpeaking(false);
  }

  async function play(message: Extract<VoiceEvent, { type: 'audio_response' }>) {
    const context = resources.current.context;
    if (context === null) return;
    const buffer = await audioBufferOf(context, message);
    const source = context.createBufferSource();
    source.buffer = buffer;
    source.connect(context.destination);
    const start = Math.max(context.currentTime, resources.current.playAt);
    source.start(start);
    resources.current.playAt = start + buffer.duration;
    resources.current.playing.push(source);
    setSpeaking(true);
    source.onended = () => {
      resources.current.playing = resources.current.playing.filter((item) => item !== source);
      if (resources.current.playing.length === 0) setSpeaking(false);
    };
  }

  function handle(message: VoiceEvent) {
    switch (message.type) {
      case 'transcript':
        setLines((current) => withTranscript(current, message.text, message.is_final));
        break;
      case 'text_response':
        setLines((current) => withAnswer(current, message));
        break;
      case 'audio_response':
        void play(message);
        break;
      case 'interrupt':
        stopPlayback();
        setInterrupted((count) => count + 1);
        setLines((current) => current.map((line) => ({ ...line, final: true })));
        break;
      case 'error':
        setError(new Error(message.error.message));
        break;
      case 'ready':
      case 'speech_started':
      case 'turn_end':
        // Nothing to show: the state badge and the transcript already say it.
        break;
    }
  }

  async function start(model: string | null) {
    setError(null);
    setState('connecting');
    try {
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
      resources.current = { socket, context, stream, playing: [], playAt: 0 };
      socket.onmessage = (event: MessageEvent) => {
        if (typeof event.data !== 'string') return;
        const message = parseVoiceEvent(event.data);
        if (message !== null) handle(message);
      };
      socket.onclose = () => stop();
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
      setState('live');
    } catch (reason) {
      setError(reason);
      stop();
    }
  }

  function stop() {
    const { socket, context, stream } = resources.current;
    stopPlayback();
    if (socket !== null && socket.readyState <= WebSocket.OPEN) socket.close();
    stream?.getTracks().forEach((track) => track.stop());
    void context?.close().catch(() => undefined);
    resources.current = noResources();
    setState('idle');
  }

  // Leaving the page closes the socket and the microphone (the latest `stop`, through a ref).
  const stopRef = useRef(stop);
  stopRef.current = stop;
  useEffect(() => () => stopRef.current(), []);

  return { state, lines, interrupted, speaking, error, start, stop };
}
