"""Every sentence in English and Chinese, and the launch commands."""
