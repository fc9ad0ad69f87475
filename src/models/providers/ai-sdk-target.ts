// What the translation for the AI SDK's providers (./ai-sdk-translation.ts, ./ai-sdk-prompt.ts)
// knows of the model it translates for, and the one form of its refusals: a 400 naming the
// parameter the provider cannot honour.
import { InvalidParameterError } from '../../errors/app-error.js';
import {
  providerProfiles,
  type AiSdkProvider,
  type ProviderProfile,
} from './provider-parameters.js';

/** The bytes of an image a provider cannot fetch itself (see ./fetched-images.ts). */
export interface FetchedImage {
  readonly data: Uint8Array;
  readonly mediaType: string;
}

/** Fetches an image URL through the platform's address policy; throws a message safe to show. */
export type ImageFetcher = (url: string, signal: AbortSignal) => Promise<FetchedImage>;

/** What the translation needs to know of the model it translates for. */
export interface TranslationTarget {
  readonly provider: AiSdkProvider;
  /** The provider's own model id (some parameters depend on the model generation). */
  readonly modelId: string;
  /** The catalog name, for messages. */
  readonly modelName: string;
  /** The provider model's `supportedUrls`: URLs it fetches itself, by media type. */
  readonly supportedUrls: Readonly<Record<string, RegExp[]>>;
  /** Absent: an image URL the provider cannot fetch is refused (send a data URL). */
  readonly fetchImage?: ImageFetcher | undefined;
}

/** The target provider's declared parameters and inputs (./provider-parameters.ts). */
export function profileOf(target: TranslationTarget): ProviderProfile {
  return providerProfiles[target.provider];
}

/** The 400 for what the target cannot honour, naming the parameter and saying why. */
export function cannotHonour(
  target: TranslationTarget,
  param: string,
  why: string,
): InvalidParameterError {
  return new InvalidParameterError(
    param,
    `Model '${target.modelName}' (${profileOf(target).name}) cannot honour '${param}': ${why}.`,
  );
}
