from typing import Optional

__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'xpu']
__version__ = '2.11.0+cu130'
debug = False
cuda: Optional[str] = '13.0'
git_version = '0000000000000000000000000000000000000000'
hip: Optional[str] = None
xpu: Optional[str] = None
