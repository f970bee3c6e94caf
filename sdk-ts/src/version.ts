/** This SDK's version, sent as `agentVersion` unless the adapter names its own. */
export const SDK_VERSION = "0.1.0";
