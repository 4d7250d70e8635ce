"""Chat models for the LLM planner: one small interface, two wire formats.

The planner needs one thing from a model: a system and a user message in, text
out, within a deadline. ``OpenAIChat`` speaks the OpenAI chat-completions format
(OpenAI itself and the many servers that copy it: vLLM, llama.cpp, Ollama's /v1,
LM Studio, OpenRouter); ``GoogleChat`` speaks Gemini's. Both SDKs are imported on
first use, because importing them costs most of a second and most agents never
plan with a model. Retries are off: a planner that waits for a retry is slower
than falling back to the heuristic plan.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Protocol, runtime_checkable

from ..errors import RemembrancesError


@runtime_checkable
class ChatModel(Protocol):
    """Anything that can answer one system+user exchange with text."""

    name: str

    def complete(self, system: str, user: str, *, timeout: float) -> str: ...


class ChatUnavailableError(RemembrancesError):
    """A chat provider's SDK or key is missing (raised on first use, not import)."""


class OpenAIChat:
    """An OpenAI-compatible chat-completions endpoint through the official ``openai`` SDK.

    ``json_mode`` asks for ``response_format={"type": "json_object"}``; turn it off
    for servers that reject the parameter. ``client`` may be a ready ``openai.OpenAI``.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        json_mode: bool = True,
        temperature: float = 0.0,
        max_tokens: int = 400,
        client: Any = None,
    ) -> None:
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url
        self.api_key = api_key
        self.json_mode = json_mode
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._client = client
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Import the SDK and build the client now, so the first plan need not wait for it."""
        self._get_client()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    import openai
                except ImportError as exc:
                    raise ChatUnavailableError(
                        "the OpenAI chat adapter needs the openai SDK: pip install 'remembrances[openai]'"
                    ) from exc
                key = self.api_key or os.environ.get("OPENAI_API_KEY")
                if not key and self.base_url is None:
                    raise ChatUnavailableError(
                        "no OpenAI API key: set OPENAI_API_KEY or pass api_key=..."
                    )
                # Local servers usually ignore the key, but the SDK insists on one.
                self._client = openai.OpenAI(
                    api_key=key or "unused", base_url=self.base_url, max_retries=0
                )
            return self._client

    def complete(self, system: str, user: str, *, timeout: float) -> str:
        client = self._get_client()
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "timeout": timeout,
        }
        if self.json_mode:
            kwargs["response_format"] = {"type": "json_object"}
        response = client.chat.completions.create(**kwargs)
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise ValueError(f"{self.name} returned no choices")
        content = choices[0].message.content
        if not isinstance(content, str):
            raise ValueError(f"{self.name} returned no text")
        return content


class GoogleChat:
    """Gemini through the ``google-genai`` SDK; ``base_url`` points it at a proxy or test server."""

    def __init__(
        self,
        model: str = "gemini-2.5-flash",
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 400,
        client: Any = None,
    ) -> None:
        self.model = model
        self.name = f"google:{model}"
        self.api_key = api_key
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._client = client
        self._lock = threading.Lock()

    def warm_up(self) -> None:
        """Import the SDK and build the client now, so the first plan need not wait for it."""
        self._get_client()

    def _get_client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    from google import genai
                    from google.genai import types
                except ImportError as exc:
                    raise ChatUnavailableError(
                        "the Google chat adapter needs google-genai: pip install 'remembrances[google]'"
                    ) from exc
                key = (
                    self.api_key
                    or os.environ.get("GOOGLE_API_KEY")
                    or os.environ.get("GEMINI_API_KEY")
                )
                if not key:
                    raise ChatUnavailableError(
                        "no Google API key: set GOOGLE_API_KEY (or GEMINI_API_KEY) or pass "
                        "api_key=..."
                    )
                options = None
                if self.base_url is not None:
                    options = types.HttpOptions(base_url=self.base_url, api_version="v1beta")
                self._client = genai.Client(api_key=key, http_options=options)
            return self._client

    def complete(self, system: str, user: str, *, timeout: float) -> str:
        client = self._get_client()
        from google.genai import types

        config = types.GenerateContentConfig(
            system_instruction=system,
            temperature=self.temperature,
            max_output_tokens=self.max_tokens,
            response_mime_type="application/json",
            # Milliseconds; retries off for the same reason as the OpenAI adapter.
            http_options=types.HttpOptions(
                timeout=max(int(timeout * 1000), 1),
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )
        response = client.models.generate_content(model=self.model, contents=user, config=config)
        text = getattr(response, "text", None)
        if not isinstance(text, str):
            raise ValueError(f"{self.name} returned no text")
        return text
