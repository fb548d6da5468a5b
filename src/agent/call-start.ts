/**
 * When OpenCode sends a prompt's call to the model (issue 24, RFC-006 "The model check"): a caller
 * that bounds the model's answer (the check's 5 s) starts its clock there, not when the session
 * turns busy. Measured on OpenCode 1.18.33 with the scripted model: the session is busy as soon
 * as the prompt arrives; OpenCode then creates the assistant message, loads what a first prompt
 * needs (plugins, the system prompt's environment: 1-9 s on a loaded 2-core machine), and sets
 * the session busy again right before the provider request (received 1-5 ms later). The
 * assistant's `step-start` part comes only once the model's response has begun (after a reply
 * held 2 s, 2 s after the request), so it would count the provider's wait as OpenCode's: it only
 * stands in should a later OpenCode not say busy again.
 */
import type { OpencodeClient } from '@opencode-ai/sdk/v2';

export interface CallStartWatch {
  /** Resolves once the event stream is connected (send the prompt after it, or its events are missed), or when it cannot be. */
  connected: Promise<void>;
  stop(): void;
}

/** Watches `sessionId`'s events and tells `onStarted` once, when its call reaches the model. */
export function watchCallStart(client: OpencodeClient, sessionId: string, onStarted: () => void): CallStartWatch {
  const controller = new AbortController();
  let connect = () => undefined as void;
  const connected = new Promise<void>((resolve) => (connect = resolve));
  let answering = false;
  let told = false;
  const tell = () => {
    if (told) return;
    told = true;
    onStarted();
    controller.abort();
  };
  void (async () => {
    const { stream } = await client.event.subscribe({}, { signal: controller.signal });
    for await (const event of stream) {
      connect(); // OpenCode's first event (server.connected) says the stream is open
      const props = event.properties as { sessionID?: string; status?: { type?: string }; info?: { sessionID?: string; role?: string }; part?: { sessionID?: string; type?: string } };
      if (event.type === 'message.updated' && props.info?.sessionID === sessionId && props.info.role === 'assistant') answering = true;
      // A busy before the assistant message is the prompt's arrival; the first one after it, the call.
      else if (event.type === 'session.status' && props.sessionID === sessionId && props.status?.type === 'busy' && answering) tell();
      else if (event.type === 'message.part.updated' && props.part?.sessionID === sessionId && props.part.type === 'step-start') tell();
    }
  })()
    .catch(() => undefined)
    .finally(connect);
  return { connected, stop: () => controller.abort() };
}
