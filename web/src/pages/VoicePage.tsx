// Talk to a model: a voice session streams the microphone as 16 kHz PCM over the session's
// WebSocket, shows the live transcript and the answer, plays the spoken answer, and stops playing
// at once when the service says the user spoke over it (barge-in).
import { Alert, Badge, Button, Card, Group, Select, Stack, Text, Title } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { api, unwrap } from '../api/client';
import { ErrorAlert, Page, useLoad } from '../components/common';
import { featureEnabled } from '../components/features';
import workletUrl from '../voice/pcm-capture-worklet.js?url';

const sampleRate = 16000;

/** The voice stream's server messages the page uses (the AsyncAPI document at /asyncapi.json). */
type VoiceEvent =
  | { type: 'speech_started'; turn_id: string }
  | { type: 'transcript'; turn_id: string; text: string; is_final: boolean }
  | { type: 'text_response'; turn_id: string; delta: string; final: false }
  | { type: 'text_response'; turn_id: string; text: string; final: true }
  | {
      type: 'audio_response';
      turn_id: string;
      audio: string;
      format: string;
      sample_rate: number;
    }
  | { type: 'interrupt'; turn_id: string; reason: string }
  | { type: 'turn_end'; turn_id: string; interrupted: boolean }
  | { type: 'ready' }
  | { type: 'error'; error: { code: string; message: string } };

interface Line {
  who: 'you' | 'assistant';
  text: string;
  final: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

export default function VoicePage() {
  const enabled = useLoad(() => featureEnabled('voice_chat'));
  const models = useLoad(async () => unwrap(await api.GET('/v1/models')));
  const [model, setModel] = useState<string | null>(null);
  const [state, setState] = useState<'idle' | 'connecting' | 'live'>('idle');
  const [lines, setLines] = useState<Line[]>([]);
  const [interrupted, setInterrupted] = useState(0);
  const [speaking, setSpeaking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const resources = useRef<{
    socket: WebSocket | null;
    context: AudioContext | null;
    stream: MediaStream | null;
    playing: AudioBufferSourceNode[];
    playAt: number;
  }>({ socket: null, context: null, stream: null, playing: [], playAt: 0 });

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
    const bytes = base64ToBytes(message.audio);
    let buffer: AudioBuffer;
    if (message.format === 'pcm') {
      const rate = message.sample_rate;
      const samples = new Int16Array(
        bytes.buffer,
        bytes.byteOffset,
        Math.floor(bytes.byteLength / 2),
      );
      buffer = context.createBuffer(1, samples.length, rate);
      const channel = buffer.getChannelData(0);
      for (let index = 0; index < samples.length; index += 1)
        channel[index] = (samples[index] ?? 0) / 0x8000;
    } else {
      buffer = await context.decodeAudioData(bytes.slice().buffer);
    }
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
      case 'transcript': {
        const { text, is_final: final } = message;
        setLines((current) => {
          const last = current[current.length - 1];
          if (last !== undefined && last.who === 'you' && !last.final) {
            return [...current.slice(0, -1), { who: 'you', text, final }];
          }
          return text === '' ? current : [...current, { who: 'you', text, final }];
        });
        break;
      }
      case 'text_response': {
        setLines((current) => {
          const last = current[current.length - 1];
          const open = last !== undefined && last.who === 'assistant' && !last.final;
          // Deltas add to the open answer; the final message carries the whole text.
          const text = message.final ? message.text : (open ? last.text : '') + message.delta;
          const line: Line = { who: 'assistant', text, final: message.final };
          return open ? [...current.slice(0, -1), line] : [...current, line];
        });
        break;
      }
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

  async function start() {
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
        try {
          const message: unknown = JSON.parse(event.data);
          if (isRecord(message) && typeof message.type === 'string') handle(message as VoiceEvent);
        } catch {
          // not JSON: ignored
        }
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
    resources.current = { socket: null, context: null, stream: null, playing: [], playAt: 0 };
    setState('idle');
  }

  // Leaving the page closes the socket and the microphone (the latest `stop`, through a ref).
  const stopRef = useRef(stop);
  stopRef.current = stop;
  useEffect(() => () => stopRef.current(), []);

  return (
    <Page title="Voice">
      {enabled.data === false && (
        <Alert color="yellow" title="Voice is not enabled" role="status">
          GET /v1/features reports voice_chat off: this build has no speech engines, or none is
          available.
        </Alert>
      )}
      <ErrorAlert error={error} />
      <Card withBorder>
        <Group align="flex-end">
          <Select
            label="Model"
            placeholder="default model"
            clearable
            data={(models.data?.models ?? [])
              .filter((item) => item.type === 'chat')
              .map((item) => item.name)}
            value={model}
            onChange={setModel}
            disabled={state !== 'idle'}
          />
          {state === 'idle' ? (
            <Button onClick={() => void start()} disabled={enabled.data !== true}>
              Start talking
            </Button>
          ) : (
            <Button color="red.9" onClick={stop}>
              Stop
            </Button>
          )}
          <Badge
            variant="filled"
            color={state === 'live' ? 'teal.9' : 'gray.8'}
            data-testid="voice-state"
          >
            {state}
          </Badge>
          {speaking && (
            <Badge variant="filled" color="blue.9">
              speaking
            </Badge>
          )}
          {interrupted > 0 && (
            <Text size="sm" data-testid="interruptions">
              Interrupted {interrupted} time(s)
            </Text>
          )}
        </Group>
      </Card>
      <Card withBorder component="section" aria-labelledby="transcript-title">
        <Title order={3} size="h4" id="transcript-title" mb="xs">
          Transcript
        </Title>
        <Stack gap="xs" aria-live="polite" data-testid="voice-transcript">
          {lines.length === 0 && <Text size="sm">Say something after starting.</Text>}
          {lines.map((line, index) => (
            <Text key={index} data-who={line.who} fs={line.final ? undefined : 'italic'}>
              <strong>{line.who === 'you' ? 'You' : 'Assistant'}:</strong> {line.text}
            </Text>
          ))}
        </Stack>
      </Card>
    </Page>
  );
}
