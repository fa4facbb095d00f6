"""Keys from a `.env` file in the working directory, never over the environment."""

from benchmark.cli import load_dotenv


def test_dotenv_fills_only_what_the_environment_lacks(tmp_path):
    env_file = tmp_path / ".env"
    env_file.write_text(
        "# keys\nOPENAI_API_KEY='sk-from-file'\nexport GEMINI_API_KEY=g-file\n"
        'ANTHROPIC_API_KEY="a b"\nnot a line\nGEMINI_API_KEY=second\n'
    )
    environ = {"GEMINI_API_KEY": "g-env"}
    added = load_dotenv(env_file, environ)
    assert added == ["OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
    assert environ == {"GEMINI_API_KEY": "g-env", "OPENAI_API_KEY": "sk-from-file", "ANTHROPIC_API_KEY": "a b"}
    assert load_dotenv(tmp_path / "missing.env", environ) == []
