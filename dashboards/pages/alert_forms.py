"""The forms of the alert pages: an alert's triage and a subscription, with their checks.

What a triage does to an alert (its history, the staff-only rule) is
``perfdb.alerting.triage``; these only read and check what was posted. ``own_address`` is
also the API's check (``dashboards.api.alerts``), so a subscription reaches only its owner
whichever way it is made.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from perfdb.models import Alert, Subscription


class TriageForm(forms.Form):
    status = forms.ChoiceField(choices=Alert.Status.choices)
    assignee = forms.ModelChoiceField(
        queryset=get_user_model().objects.filter(is_active=True).order_by("username"),
        required=False,
    )
    notes = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)


class SubscriptionForm(forms.ModelForm):
    class Meta:
        model = Subscription
        fields = [
            "email",
            "workload_pattern",
            "hardware_pattern",
            "metric_pattern",
            "min_change_pct",
            "delivery",
            "active",
        ]
        help_texts = {
            "email": "your account's address (staff set it in the admin)",
            "workload_pattern": "shell pattern, e.g. SPECjAppServer* or *",
            "min_change_pct": "only alerts at least this large (absolute %)",
        }

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_email(self) -> str:
        return own_address(self.user, self.cleaned_data["email"])


def own_address(user, email: str) -> str:
    """Alerts go only to the subscriber's own address, the one on their account (set by
    staff, who know it is theirs): nobody can sign someone else up for mail."""
    own = (user.email or "").strip()
    if not own:
        raise ValidationError("your account has no email address; ask staff to set it")
    if email.strip().lower() != own.lower():
        raise ValidationError(f"you can only subscribe your own address, {own}")
    return own
