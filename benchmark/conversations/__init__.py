"""The Turn 1/2/3 protocol and the conversations that play it: direct (the text proxy), over the stream, watched in the studio, and the proactive trial."""
