// A voice session's state: the live transcript and answer, whether the answer is being spoken, and
// how often the service stopped it because the user spoke over it (barge-in). Leaving the page
// closes the socket and the microphone.
import { useEffect, useRef, useState } from 'react';
import { noResources, openVoiceSession, release, type Resources } from './voice-connection';
import { withAnswer, withTranscript, type Line, type VoiceEvent } from './voice-events';

export function useVoiceSession() {
  const [state, setState] = useState<'idle' | 'connecting' | 'live'>('idle');
  const [lines, setLines] = useState<Line[]>([]);
  const [interrupted, setInterrupted] = useState(0);
  const [speaking, setSpeaking] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const resources = useRef<Resources>(noResources());

  function handle(message: VoiceEvent) {
    switch (message.type) {
      case 'transcript':
        setLines((current) => withTranscript(current, message.text, message.is_final));
        break;
      case 'text_response':
        setLines((current) => withAnswer(current, message));
        break;
      case 'audio_response':
        void resources.current.player?.play(message);
        break;
      case 'interrupt':
        resources.current.player?.stop();
        setSpeaking(false);
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
      const handlers = { onEvent: handle, onClose: () => stop(), onSpeaking: setSpeaking };
      await openVoiceSession(model, handlers, (opened) => {
        resources.current = opened;
      });
      setState('live');
    } catch (reason) {
      setError(reason);
      stop();
    }
  }

  function stop() {
    release(resources.current);
    resources.current = noResources();
    setSpeaking(false);
    setState('idle');
  }

  // Leaving the page closes the socket and the microphone (the latest `stop`, through a ref).
  const stopRef = useRef(stop);
  stopRef.current = stop;
  useEffect(() => () => stopRef.current(), []);

  return { state, lines, interrupted, speaking, error, start, stop };
}
