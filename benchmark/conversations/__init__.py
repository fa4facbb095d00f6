"""The Turn 1/2/3 protocol and the conversations that play it: direct (the text proxy), over the stream, a proactive
scenario watched through the glasses, and the proactive trial.
"""
