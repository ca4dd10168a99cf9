"""Settings from the environment (docs/operations.md, "Configuration"): defaults, every variable, every wrong value."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest

from countersign import settings as settings_module
from countersign.core.tickets import new_secret
from countersign.settings import KNOWN_PACKS, ConfigError, Settings, default_data_dir, load

VARIABLES = [
    "COUNTERSIGN_STORE",
    "COUNTERSIGN_PUBLIC_URL",
    "COUNTERSIGN_PACKS",
    "COUNTERSIGN_MAIL",
    "COUNTERSIGN_SIGNING_KEY",
    "COUNTERSIGN_STATE_KEYS",
    "COUNTERSIGN_FALLBACK",
    "COUNTERSIGN_REQUIRE_ELICITATION",
    "COUNTERSIGN_CARD_TTL",
    "COUNTERSIGN_CODE_TTL",
    "COUNTERSIGN_EMAIL_INTERVAL",
    "COUNTERSIGN_DATA",
    "COUNTERSIGN_ORIGIN_SECRET",
    "COUNTERSIGN_TRUSTED_PROXIES",
]
KEY32 = "k" * 32


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch, tmp_path):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))


# --- defaults ---------------------------------------------------------------------------------


def test_defaults(tmp_path):
    s = load({})
    assert s.data_dir == tmp_path / "xdg" / "countersign" == default_data_dir()
    assert s.store_url == ""
    assert s.store == f"sqlite:///{tmp_path / 'xdg' / 'countersign' / 'countersign.db'}"
    assert s.public_url == "http://localhost:8000"
    assert s.pending_url == "http://localhost:8000/confirm"
    assert s.card_url("card_1") == "http://localhost:8000/confirm?card=card_1"
    assert s.packs == ("budget", "mail", "gateway") == KNOWN_PACKS
    assert s.mail == "outbox"
    assert s.signing_key is None
    assert s.state_keys == ()
    assert s.fallback == "card"
    assert s.require_elicitation is False
    assert s.card_ttl == 86400
    assert s.code_ttl == 600
    assert s.email_interval == 900
    assert s.origin_secret is None


def test_load_defaults_equal_the_dataclass_defaults():
    assert load({}) == Settings()


def test_empty_values_mean_default():
    assert load({name: "" for name in VARIABLES}) == load({})


def test_default_data_dir_without_xdg(monkeypatch):
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_data_dir() == Path.home() / ".local" / "share" / "countersign"


def test_load_reads_the_process_environment(monkeypatch):
    monkeypatch.setenv("COUNTERSIGN_FALLBACK", "code")
    monkeypatch.setenv("COUNTERSIGN_CODE_TTL", "120")
    s = load()
    assert s.fallback == "code" and s.code_ttl == 120


def test_overrides_win():
    s = load({"COUNTERSIGN_CARD_TTL": "3600"}, card_ttl=60, public_url="https://x.example")
    assert s.card_ttl == 60 and s.public_url == "https://x.example"


def test_settings_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        load({}).card_ttl = 1  # type: ignore[misc]


# --- each variable parsed ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["sqlite:////tmp/cs/countersign.db", "sqlite:///relative.db", "dynamodb://countersign-prod"])
def test_store(value):
    s = load({"COUNTERSIGN_STORE": value})
    assert s.store_url == value and s.store == value


@pytest.mark.parametrize(
    "value, url",
    [
        ("https://cs.example.com", "https://cs.example.com"),
        ("https://cs.example.com/", "https://cs.example.com"),
        ("http://127.0.0.1:9000/", "http://127.0.0.1:9000"),
        ("https://example.com/countersign/", "https://example.com/countersign"),
    ],
)
def test_public_url(value, url):
    s = load({"COUNTERSIGN_PUBLIC_URL": value})
    assert s.public_url == url
    assert s.pending_url == f"{url}/confirm"
    assert s.card_url("card_9") == f"{url}/confirm?card=card_9"


@pytest.mark.parametrize(
    "value, packs",
    [
        ("budget", ("budget",)),
        ("mail", ("mail",)),
        (" mail , budget ", ("mail", "budget")),
        ("budget,mail,", ("budget", "mail")),
        ("  ", KNOWN_PACKS),
    ],
)
def test_packs(value, packs):
    assert load({"COUNTERSIGN_PACKS": value}).packs == packs


@pytest.mark.parametrize(
    "value", ["outbox", "smtp://localhost:1025", "smtps://mail.example.com:465", "ses:noreply@example.com"]
)
def test_mail(value):
    assert load({"COUNTERSIGN_MAIL": value}).mail == value


@pytest.mark.parametrize(
    "value",
    [new_secret(), "arn:aws:secretsmanager:eu-west-1:123456789012:secret:countersign-key", "x" * 40],
    ids=["generated", "secret-arn", "forty-chars"],
)
def test_signing_key(value):
    assert load({"COUNTERSIGN_SIGNING_KEY": value}).signing_key == value


@pytest.mark.parametrize(
    "value, keys",
    [
        (KEY32, (KEY32,)),
        (f" {KEY32} , {'m' * 40} ", (KEY32, "m" * 40)),
        ("arn:aws:secretsmanager:eu-west-1:1:secret:s", ("arn:aws:secretsmanager:eu-west-1:1:secret:s",)),
        ("é" * 16, ("é" * 16,)),  # 32 bytes in UTF-8
    ],
)
def test_state_keys(value, keys):
    assert load({"COUNTERSIGN_STATE_KEYS": value}).state_keys == keys


@pytest.mark.parametrize(
    "value, secret",
    [
        ("Ab3" * 21 + "c", "Ab3" * 21 + "c"),  # what GenerateSecretString makes: 64 letters and digits
        (KEY32, KEY32),
        (f"  {KEY32}\n", KEY32),  # a header value carries no surrounding spaces
        ("!#$%&'*+-.^_`|~" + "z" * 17, "!#$%&'*+-.^_`|~" + "z" * 17),
        ("arn:aws:secretsmanager:eu-west-1:123456789012:secret:OriginVerifySecret-AbCdEf",
         "arn:aws:secretsmanager:eu-west-1:123456789012:secret:OriginVerifySecret-AbCdEf"),
    ],
)
def test_origin_secret(value, secret):
    assert load({"COUNTERSIGN_ORIGIN_SECRET": value}).origin_secret == secret


@pytest.mark.parametrize("value", ["card", "code"])
def test_fallback(value):
    assert load({"COUNTERSIGN_FALLBACK": value}).fallback == value


@pytest.mark.parametrize(
    "value, on",
    [
        ("1", True),
        ("true", True),
        ("TRUE", True),
        ("yes", True),
        (" on ", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("off", False),
    ],
)
def test_require_elicitation(value, on):
    assert load({"COUNTERSIGN_REQUIRE_ELICITATION": value}).require_elicitation is on


@pytest.mark.parametrize(
    "name, attr, value, parsed",
    [
        ("COUNTERSIGN_CARD_TTL", "card_ttl", "3600", 3600),
        ("COUNTERSIGN_CARD_TTL", "card_ttl", "60", 60),
        ("COUNTERSIGN_CODE_TTL", "code_ttl", "300", 300),
        ("COUNTERSIGN_CODE_TTL", "code_ttl", "10", 10),
        ("COUNTERSIGN_EMAIL_INTERVAL", "email_interval", "0", 0),
        ("COUNTERSIGN_EMAIL_INTERVAL", "email_interval", "60", 60),
    ],
)
def test_durations(name, attr, value, parsed):
    assert getattr(load({name: value}), attr) == parsed


def test_data(tmp_path):
    s = load({"COUNTERSIGN_DATA": str(tmp_path / "data")})
    assert s.data_dir == tmp_path / "data"
    assert s.store == f"sqlite:///{tmp_path / 'data' / 'countersign.db'}"
    existing = tmp_path / "existing"
    existing.mkdir()
    assert load({"COUNTERSIGN_DATA": str(existing)}).data_dir == existing
    # an explicit store wins over the data folder
    assert load({"COUNTERSIGN_DATA": str(existing), "COUNTERSIGN_STORE": "dynamodb://t"}).store == "dynamodb://t"


# --- each wrong value -------------------------------------------------------------------------


def _a_file(tmp_path: Path) -> str:
    path = tmp_path / "not-a-folder"
    path.write_text("x")
    return str(path)


WRONG = [
    ("COUNTERSIGN_STORE", "postgres://db/countersign"),
    ("COUNTERSIGN_STORE", "countersign.db"),
    ("COUNTERSIGN_STORE", "dynamodb://"),
    ("COUNTERSIGN_STORE", "sqlite:///"),
    ("COUNTERSIGN_PUBLIC_URL", "localhost:8000"),
    ("COUNTERSIGN_PUBLIC_URL", "ftp://example.com"),
    ("COUNTERSIGN_PUBLIC_URL", "https://"),
    ("COUNTERSIGN_PUBLIC_URL", "https://cs.example.com/?tenant=1"),
    ("COUNTERSIGN_PUBLIC_URL", "https://cs.example.com#top"),
    ("COUNTERSIGN_PUBLIC_URL", "https://cs.example.com/?"),
    ("COUNTERSIGN_PUBLIC_URL", "https://admin:hunter2@cs.example.com"),
    ("COUNTERSIGN_PACKS", "budget,crm"),
    ("COUNTERSIGN_PACKS", "Budget"),
    ("COUNTERSIGN_MAIL", "sendmail"),
    ("COUNTERSIGN_MAIL", "ses:nobody"),
    ("COUNTERSIGN_SIGNING_KEY", "   "),
    ("COUNTERSIGN_SIGNING_KEY", "secret"),
    ("COUNTERSIGN_STATE_KEYS", "short"),
    ("COUNTERSIGN_STATE_KEYS", f"{KEY32},short"),
    ("COUNTERSIGN_FALLBACK", "email"),
    ("COUNTERSIGN_FALLBACK", "Code"),
    ("COUNTERSIGN_REQUIRE_ELICITATION", "maybe"),
    ("COUNTERSIGN_REQUIRE_ELICITATION", "2"),
    ("COUNTERSIGN_CARD_TTL", "a day"),
    ("COUNTERSIGN_CARD_TTL", "1.5"),
    ("COUNTERSIGN_CARD_TTL", "59"),
    ("COUNTERSIGN_CARD_TTL", "-3600"),
    ("COUNTERSIGN_CODE_TTL", "ten"),
    ("COUNTERSIGN_CODE_TTL", "9"),
    ("COUNTERSIGN_CODE_TTL", "0"),
    ("COUNTERSIGN_EMAIL_INTERVAL", "-1"),
    ("COUNTERSIGN_EMAIL_INTERVAL", "15m"),
    ("COUNTERSIGN_DATA", "<a file>"),
    ("COUNTERSIGN_DATA", "bad\x00path"),
    ("COUNTERSIGN_ORIGIN_SECRET", "   "),
    ("COUNTERSIGN_ORIGIN_SECRET", "k" * 31),
    ("COUNTERSIGN_ORIGIN_SECRET", "é" * 16),  # 32 bytes, but a header carries ASCII
    ("COUNTERSIGN_ORIGIN_SECRET", "k" * 16 + " " + "k" * 16),
    ("COUNTERSIGN_ORIGIN_SECRET", "k" * 32 + "\r\nX-Other: 1"),
    ("COUNTERSIGN_TRUSTED_PROXIES", "my-proxy"),
    ("COUNTERSIGN_TRUSTED_PROXIES", "*"),
    ("COUNTERSIGN_TRUSTED_PROXIES", "127.0.0.1,10.0.0.0/33"),
]


def test_every_variable_has_a_wrong_value():
    assert {name for name, _ in WRONG} == set(VARIABLES)


@pytest.mark.parametrize("name, value", WRONG, ids=[f"{n}={v!r}" for n, v in WRONG])
def test_wrong_value_names_the_variable(tmp_path, name, value):
    if value == "<a file>":
        value = _a_file(tmp_path)
    with pytest.raises(ConfigError) as info:
        load({name: value})
    error = info.value
    assert error.variable == name
    assert str(error).startswith(f"{name}: ")
    assert isinstance(error, ValueError)


def test_config_error_message():
    error = ConfigError("COUNTERSIGN_FALLBACK", "expected card or code")
    assert str(error) == "COUNTERSIGN_FALLBACK: expected card or code"
    assert error.variable == "COUNTERSIGN_FALLBACK"


def test_wrong_values_in_the_process_environment_stop_start_up(monkeypatch):
    monkeypatch.setenv("COUNTERSIGN_CODE_TTL", "soon")
    with pytest.raises(ConfigError) as info:
        load()
    assert info.value.variable == "COUNTERSIGN_CODE_TTL"


def test_module_exports():
    assert settings_module.KNOWN_PACKS == ("budget", "mail", "gateway")


def test_trusted_proxies_default_to_none_and_take_addresses_and_networks():
    assert load({}).trusted_proxies == ()
    assert load({"COUNTERSIGN_TRUSTED_PROXIES": " 127.0.0.1, 10.0.0.0/8 ,::1"}).trusted_proxies == (
        "127.0.0.1", "10.0.0.0/8", "::1")


def test_the_recorded_public_url_reads_back(tmp_path):
    settings_module.record_public_url(tmp_path, "http://localhost:8101")
    assert settings_module.recorded_public_url(tmp_path) == "http://localhost:8101"
    assert (tmp_path / "server.json").stat().st_mode & 0o777 == 0o600
    (tmp_path / "server.json").write_text("{not json")
    assert settings_module.recorded_public_url(tmp_path) is None
    (tmp_path / "server.json").write_text('{"public_url": "ftp://x"}')
    assert settings_module.recorded_public_url(tmp_path) is None
    assert settings_module.recorded_public_url(tmp_path / "nowhere") is None


@pytest.mark.parametrize("name, value", [
    ("COUNTERSIGN_STORE", "dynamodb://table"),
    ("COUNTERSIGN_MAIL", "ses:countersign@example.com"),
    ("COUNTERSIGN_SIGNING_KEY", "arn:aws:secretsmanager:eu-west-1:123456789012:secret:k"),
])
def test_a_value_that_needs_aws_says_so_when_the_aws_libraries_are_missing(name, value):
    """Serving installs without the ``aws`` extra (boto3, Powertools): such a value names itself
    and the install command at start-up. Run where boto3 cannot be imported."""
    script = ("import sys; sys.modules['boto3'] = None\n"
              "from countersign.settings import ConfigError, load\n"
              f"try:\n    load({{{name!r}: {value!r}}})\nexcept ConfigError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={k: v for k, v in os.environ.items() if not k.startswith("COUNTERSIGN_")})
    assert done.stdout.startswith(f"{name}: this value needs the AWS libraries"), (done.stdout, done.stderr)
    assert "[aws]" in done.stdout
