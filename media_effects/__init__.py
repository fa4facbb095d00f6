"""What the glasses and the server both do to media: impairments and their profiles, the media library,
frame and audio coding, speech synthesis, synthetic and pictograph frames. Imports only `core`."""
